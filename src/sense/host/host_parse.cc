#include "sense/host/host_parse.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "sys/fs.h"

namespace gpuenv {

namespace {

// Fields separated by runs of spaces or tabs.
std::vector<std::string_view> fields(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::string_view f : split(text, ' '))
    for (std::string_view g : split(f, '\t'))
      if (!g.empty()) out.push_back(g);
  return out;
}

// Non-empty lines, without their '\n'.
std::vector<std::string_view> nonempty_lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::string_view l : split(text, '\n'))
    if (!l.empty()) out.push_back(l);
  return out;
}

// Decimal digits only: no sign, no spaces, no overflow.
template <typename T>
bool parse_uint(std::string_view text, T* value) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string quote(std::string_view text) {
  constexpr std::size_t kMax = 64;
  std::string out = "\"";
  for (char c : text.substr(0, kMax))
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out + (text.size() > kMax ? "...\"" : "\"");
}

bool fail(std::string* err, std::string message) {
  *err = std::move(message);
  return false;
}

bool parse_cpu_index(std::string_view text, int* cpu, std::string* err) {
  if (!parse_uint(text, cpu)) return fail(err, "bad CPU number " + quote(text));
  if (*cpu >= kMaxCpus)
    return fail(err, "CPU " + quote(text) + " >= " + std::to_string(kMaxCpus));
  return true;
}

bool parse_cpu_range(std::string_view item, int* lo, int* hi, std::string* err) {
  std::size_t dash = item.find('-');
  if (!parse_cpu_index(item.substr(0, dash), lo, err)) return false;
  if (dash == std::string_view::npos) return *hi = *lo, true;
  if (!parse_cpu_index(item.substr(dash + 1), hi, err)) return false;
  if (*hi < *lo) return fail(err, "reversed CPU range " + quote(item));
  return true;
}

bool parse_positive_period(std::string_view text, std::uint64_t* period,
                           std::string* err) {
  if (!parse_uint(text, period) || *period == 0)
    return fail(err, "bad CPU period " + quote(text));
  return true;
}

bool is_printable(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c >= 0x20 && c < 0x7f; });
}

bool contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

bool is_ancestor(std::string_view root, std::string_view path) {
  if (root == "/") return true;
  if (path.substr(0, root.size()) != root) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

// Path components of `path` below `root`; empty when it is not below it or
// would climb with "..".
std::vector<std::string> relative_parts(std::string_view root,
                                        std::string_view path) {
  if (!is_ancestor(root, path)) return {};
  std::vector<std::string> parts;
  for (std::string_view p : split(path.substr(root == "/" ? 0 : root.size()), '/')) {
    if (p == "..") return {};
    if (!p.empty() && p != ".") parts.emplace_back(p);
  }
  return parts;
}

CgroupLocation location(int version, const CgroupEntry& e, const MountInfo& m) {
  std::vector<std::string> parts = relative_parts(m.root, e.path);
  CgroupLocation loc{version, {}};
  for (std::size_t n = parts.size();; --n) {
    std::string dir = m.mount_point;
    for (std::size_t i = 0; i < n; ++i) dir = fs::join(dir.empty() ? "/" : dir, parts[i]);
    loc.dirs.push_back(dir);
    if (n == 0) return loc;
  }
}

// Among mounts of `fstype` that `wanted` accepts, the one whose root holds
// `path` most closely; else (or on a tie) the last one mounted.
template <typename Pred>
const MountInfo* best_mount(const std::vector<MountInfo>& mounts,
                            std::string_view fstype, std::string_view path,
                            Pred wanted) {
  const MountInfo* best = nullptr;
  std::size_t best_score = 0;
  for (const MountInfo& m : mounts) {
    if (m.fstype != fstype || !wanted(m)) continue;
    std::size_t score = is_ancestor(m.root, path) ? m.root.size() + 1 : 0;
    if (!best || score >= best_score) best = &m, best_score = score;
  }
  return best;
}

bool parse_meminfo_line(std::string_view line, std::string* key,
                        std::uint64_t* value, std::string* err) {
  std::vector<std::string_view> f = fields(line);
  if (f.size() >= 2 && f[0] == "Node") f.erase(f.begin(), f.begin() + 2);
  bool ok = f.size() == 2 || (f.size() == 3 && f[2] == "kB");
  if (!ok || f[0].size() < 2 || f[0].back() != ':' || !parse_uint(f[1], value))
    return fail(err, "bad meminfo line " + quote(line));
  *key = std::string(f[0].substr(0, f[0].size() - 1));
  if (f.size() == 3 && *value > UINT64_MAX / 1024)
    return fail(err, "meminfo value overflows: " + quote(line));
  if (f.size() == 3) *value *= 1024;
  return true;
}

int size_shift(char suffix) {
  switch (suffix) {
    case 'k': case 'K': return 10;
    case 'm': case 'M': return 20;
    case 'g': case 'G': return 30;
    case 't': case 'T': return 40;
    default: return -1;
  }
}

// A Python identifier at the start of `line`, or "".
std::string_view identifier(std::string_view line) {
  std::size_t n = 0;
  auto ok = [](char c, bool first) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (!first && c >= '0' && c <= '9');
  };
  while (n < line.size() && ok(line[n], n == 0)) ++n;
  return line.substr(0, n);
}

// The value of a simple string literal ('x' or "x", no escapes), else
// nullopt; a trailing comment is allowed.
std::optional<std::string> string_literal(std::string_view text) {
  if (text.empty() || (text[0] != '\'' && text[0] != '"')) return std::nullopt;
  std::size_t close = text.find(text[0], 1);
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view value = text.substr(1, close - 1);
  std::string_view rest = trim(text.substr(close + 1));
  if (value.find('\\') != std::string_view::npos) return std::nullopt;
  if (!rest.empty() && rest[0] != '#') return std::nullopt;
  return std::string(value);
}

// `name [: annotation] = value` -> name and the trimmed value text.
bool assignment(std::string_view line, std::string_view* name,
                std::string_view* value) {
  *name = identifier(line);
  if (name->empty()) return false;
  std::string_view rest = trim(line.substr(name->size()));
  if (!rest.empty() && rest[0] == ':') {
    std::size_t eq = rest.find('=');
    if (eq == std::string_view::npos) return false;
    rest = rest.substr(eq);
  }
  if (rest.size() < 2 || rest[0] != '=' || rest[1] == '=') return false;
  *value = trim(rest.substr(1));
  return true;
}

bool torch_string(std::string_view name, std::string_view value,
                  std::optional<std::string>* out, bool none_ok,
                  std::string* err) {
  std::string_view v = value.substr(0, value.find('#'));
  if (none_ok && trim(v) == "None") return out->reset(), true;
  *out = string_literal(value);
  // Quotes are legal inside the other kind ('"1'), but never in a version,
  // and a value that holds them would reach shells and reports.
  if (!*out || (*out)->empty() || (*out)->size() > 128 || !is_printable(**out) ||
      (*out)->find_first_of("'\"") != std::string::npos)
    return fail(err, std::string(name) + ": not a plain string: " + quote(value));
  return true;
}

}  // namespace

bool parse_cpu_list(std::string_view text, std::vector<int>* cpus,
                    std::string* err) {
  cpus->clear();
  text = trim(text);
  if (text.empty()) return true;
  // The CPUs named, then sorted and deduplicated: linear in the list's
  // size, not in kMaxCpus (GPU sensing parses one list per GPU).
  std::size_t total = 0;
  for (std::string_view item : split(text, ',')) {
    int lo = 0, hi = 0;
    if (!parse_cpu_range(trim(item), &lo, &hi, err)) return cpus->clear(), false;
    total += hi - lo + 1;
    if (total > static_cast<std::size_t>(kMaxCpus))
      return cpus->clear(),
             fail(err, "CPU list names more than " + std::to_string(kMaxCpus) + " CPUs");
    for (int c = lo; c <= hi; ++c) cpus->push_back(c);
  }
  if (!std::is_sorted(cpus->begin(), cpus->end())) std::sort(cpus->begin(), cpus->end());
  cpus->erase(std::unique(cpus->begin(), cpus->end()), cpus->end());
  return true;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

bool parse_cpu_max(std::string_view text, std::optional<double>* cpus,
                   std::string* err) {
  std::vector<std::string_view> f = fields(trim(text));
  if (f.empty() || f.size() > 2) return fail(err, "bad cpu.max " + quote(text));
  std::uint64_t period = 100000, quota = 0;
  if (f.size() == 2 && !parse_positive_period(f[1], &period, err)) return false;
  if (f[0] == "max") return cpus->reset(), true;
  if (!parse_uint(f[0], &quota) || quota == 0)
    return fail(err, "bad cpu.max quota " + quote(f[0]));
  *cpus = static_cast<double>(quota) / static_cast<double>(period);
  return true;
}

bool parse_cfs_quota(std::string_view quota, std::string_view period,
                     std::optional<double>* cpus, std::string* err) {
  quota = trim(quota);
  std::uint64_t p = 0, q = 0;
  if (!parse_positive_period(trim(period), &p, err)) return false;
  if (quota == "-1") return cpus->reset(), true;
  if (!parse_uint(quota, &q) || q == 0)
    return fail(err, "bad cpu.cfs_quota_us " + quote(quota));
  *cpus = static_cast<double>(q) / static_cast<double>(p);
  return true;
}

bool parse_memory_limit(std::string_view text,
                        std::optional<std::uint64_t>* bytes, std::string* err) {
  text = trim(text);
  std::uint64_t v = 0;
  if (text == "max") return bytes->reset(), true;
  if (!parse_uint(text, &v)) return fail(err, "bad memory limit " + quote(text));
  if (v >= kUnlimitedMemory) bytes->reset();
  else *bytes = v;
  return true;
}

bool parse_proc_cgroup(std::string_view text, std::vector<CgroupEntry>* entries,
                       std::string* err) {
  entries->clear();
  for (std::string_view line : nonempty_lines(text)) {
    std::size_t c1 = line.find(':');
    std::size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    CgroupEntry e;
    if (c2 == std::string_view::npos || !parse_uint(line.substr(0, c1), &e.hierarchy_id))
      return fail(err, "bad cgroup line " + quote(line));
    e.path = std::string(line.substr(c2 + 1));
    if (e.path.empty() || e.path[0] != '/')
      return fail(err, "bad cgroup path in " + quote(line));
    std::string_view ctl = line.substr(c1 + 1, c2 - c1 - 1);
    if (!ctl.empty())
      for (std::string_view c : split(ctl, ',')) e.controllers.emplace_back(c);
    entries->push_back(std::move(e));
  }
  return true;
}

std::string unescape_octal(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto octal = [&](std::size_t k) {
      return i + k < text.size() && text[i + k] >= '0' && text[i + k] <= '7';
    };
    if (text[i] == '\\' && octal(1) && octal(2) && octal(3)) {
      int v = (text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 + (text[i + 3] - '0');
      if (v > 0 && v < 256) {
        out += static_cast<char>(v);
        i += 3;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

bool parse_mountinfo_line(std::string_view line, MountInfo* m, std::string* err) {
  std::vector<std::string_view> f = fields(line);
  auto dash = std::find(f.begin(), f.end(), "-");
  std::size_t at = dash - f.begin();
  if (at < 6 || f.size() - at < 3 || f.size() - at > 4)
    return fail(err, "bad mountinfo line " + quote(line));
  if (!parse_uint(f[0], &m->mount_id) || !parse_uint(f[1], &m->parent_id))
    return fail(err, "bad mount IDs in " + quote(line));
  m->root = unescape_octal(f[3]);
  m->mount_point = unescape_octal(f[4]);
  if (m->mount_point.empty() || m->mount_point[0] != '/')
    return fail(err, "bad mount point in " + quote(line));
  m->fstype = unescape_octal(f[at + 1]);
  m->source = unescape_octal(f[at + 2]);
  m->super_options.clear();
  if (f.size() - at == 4)
    for (std::string_view o : split(f[at + 3], ','))
      m->super_options.push_back(unescape_octal(o));
  return true;
}

bool parse_mountinfo(std::string_view text, std::vector<MountInfo>* mounts,
                     std::string* err) {
  mounts->clear();
  std::size_t n = 0;
  for (std::string_view line : split(text, '\n')) {
    ++n;
    if (line.empty()) continue;
    MountInfo m;
    if (!parse_mountinfo_line(line, &m, err))
      return fail(err, "line " + std::to_string(n) + ": " + *err);
    mounts->push_back(std::move(m));
  }
  return true;
}

std::optional<CgroupLocation> locate_cgroup(
    const std::vector<CgroupEntry>& entries,
    const std::vector<MountInfo>& mounts, std::string_view controller) {
  for (const CgroupEntry& e : entries) {
    if (e.hierarchy_id == 0 || !contains(e.controllers, controller)) continue;
    auto has = [&](const MountInfo& m) { return contains(m.super_options, controller); };
    if (const MountInfo* m = best_mount(mounts, "cgroup", e.path, has))
      return location(1, e, *m);
  }
  for (const CgroupEntry& e : entries) {
    if (e.hierarchy_id != 0 || !e.controllers.empty()) continue;
    auto any = [](const MountInfo&) { return true; };
    if (const MountInfo* m = best_mount(mounts, "cgroup2", e.path, any))
      return location(2, e, *m);
  }
  return std::nullopt;
}

bool parse_meminfo(std::string_view text,
                   std::map<std::string, std::uint64_t>* out, std::string* err) {
  out->clear();
  for (std::string_view line : nonempty_lines(text)) {
    std::string key;
    std::uint64_t value = 0;
    if (!parse_meminfo_line(line, &key, &value, err)) return false;
    out->emplace(std::move(key), value);
  }
  return true;
}

bool parse_size_option(const std::vector<std::string>& options,
                       std::optional<std::uint64_t>* bytes, std::string* err) {
  bytes->reset();
  for (const std::string& o : options) {
    if (o.rfind("size=", 0) != 0) continue;
    std::string_view v = std::string_view(o).substr(5);
    int shift = v.empty() ? -1 : size_shift(v.back());
    if (shift >= 0) v.remove_suffix(1);
    std::uint64_t n = 0;
    if (!parse_uint(v, &n)) return fail(err, "bad tmpfs option " + quote(o));
    if (shift > 0 && n > (UINT64_MAX >> shift))
      return fail(err, "tmpfs size overflows: " + quote(o));
    *bytes = shift > 0 ? n << shift : n;
  }
  return true;
}

std::map<std::string, std::string> parse_environ(std::string_view text) {
  std::map<std::string, std::string> env;
  for (std::string_view entry : split(text, '\0')) {
    std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

std::optional<std::string> proc_status_field(std::string_view text,
                                             std::string_view name) {
  for (std::string_view line : nonempty_lines(text)) {
    std::size_t colon = line.find(':');
    if (colon != std::string_view::npos && line.substr(0, colon) == name)
      return std::string(trim(line.substr(colon + 1)));
  }
  return std::nullopt;
}

std::optional<std::string> container_hint(std::string_view text) {
  static constexpr std::pair<std::string_view, std::string_view> kHints[] = {
      {"kubepods", "kubernetes"}, {"kubelet", "kubernetes"},
      {"libpod", "podman"},       {"containers/storage", "podman"},
      {"docker", "docker"},       {"containerd", "containerd"},
      {"lxc", "lxc"},
  };
  for (auto [token, kind] : kHints)
    if (text.find(token) != std::string_view::npos) return std::string(kind);
  return std::nullopt;
}

std::string container_kind(std::string_view value) {
  value = trim(value);
  for (std::string_view kind : {"docker", "podman", "kubernetes", "containerd"})
    if (value == kind) return std::string(kind);
  if (value.substr(0, 3) == "lxc") return "lxc";  // lxc, lxc-libvirt
  return "other";
}

std::optional<bool> interface_up(std::string_view operstate,
                                  std::optional<std::string_view> flags) {
  operstate = trim(operstate);
  if (operstate == "up") return true;
  for (std::string_view s : {"down", "lowerlayerdown", "notpresent", "dormant"})
    if (operstate == s) return false;
  std::string_view f = flags ? trim(*flags) : std::string_view();
  if (f.substr(0, 2) != "0x" || f.size() < 3) return std::nullopt;
  std::uint64_t bits = 0;
  auto [end, ec] = std::from_chars(f.data() + 2, f.data() + f.size(), bits, 16);
  if (ec != std::errc() || end != f.data() + f.size()) return std::nullopt;
  return (bits & 0x1) != 0;  // IFF_UP
}

namespace {

// Up to max_digits hex digits at the front of *text, consumed.
bool take_hex(std::string_view* text, std::size_t max_digits, unsigned* value) {
  std::size_t n = 0;
  while (n < text->size() && n < max_digits && std::isxdigit(static_cast<unsigned char>((*text)[n])))
    ++n;
  if (n == 0) return false;
  std::from_chars(text->data(), text->data() + n, *value, 16);
  text->remove_prefix(n);
  return true;
}

bool take_char(std::string_view* text, char c) {
  if (text->empty() || text->front() != c) return false;
  text->remove_prefix(1);
  return true;
}

}  // namespace

std::optional<std::string> sysfs_pci_address(std::string_view id) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (!take_hex(&id, 8, &domain) || !take_char(&id, ':') || !take_hex(&id, 2, &bus) ||
      !take_char(&id, ':') || !take_hex(&id, 2, &device) || !take_char(&id, '.') ||
      !take_hex(&id, 1, &function) || !id.empty() || device > 0x1f || function > 7)
    return std::nullopt;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return buf;
}

namespace {

// "/sys/devices/pci0000:16/0000:16:02.0/0000:18:00.0" ->
// {"pci0000:16", "0000:16:02.0", "0000:18:00.0"}; empty when not such a path.
std::vector<std::string_view> pci_path(std::string_view path) {
  constexpr std::string_view kPrefix = "/sys/devices/";
  std::vector<std::string_view> parts;
  if (path.substr(0, kPrefix.size()) != kPrefix) return {};
  path.remove_prefix(kPrefix.size());
  while (!path.empty()) {
    std::size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    bool ok = parts.empty() ? part.substr(0, 3) == "pci" && part.size() > 3
                            : part.size() == 12 && part[4] == ':' && part[7] == ':' && part[10] == '.';
    if (!ok) return {};
    parts.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts.size() >= 2 ? parts : std::vector<std::string_view>{};
}

}  // namespace

std::optional<std::string> pci_topology(std::string_view a, std::string_view b,
                                        std::optional<int> numa_a, std::optional<int> numa_b) {
  std::vector<std::string_view> pa = pci_path(a), pb = pci_path(b);
  if (pa.empty() || pb.empty() || pa == pb) return std::nullopt;
  if (pa[0] != pb[0]) return numa_a != numa_b ? "system" : "node";
  std::size_t common = 0;
  while (common < pa.size() && common < pb.size() && pa[common] == pb[common]) ++common;
  if (common == pa.size() || common == pb.size()) return std::nullopt;  // one above the other
  if (common == 1) return "hostbridge";
  // Below a switch's upstream port: its downstream port, then the device.
  return pa.size() - common <= 2 && pb.size() - common <= 2 ? "single" : "multiple";
}

bool parse_numa_node(std::string_view text, std::optional<int>* node, std::string* err) {
  std::string_view t = trim(text);
  int value = 0;
  if (t == "-1") return node->reset(), true;
  if (!parse_uint(t, &value)) return fail(err, "bad NUMA node " + quote(t));
  *node = value;
  return true;
}

bool parse_limit(std::string_view text, std::string_view name,
                 std::optional<std::uint64_t>* soft, std::string* err) {
  for (std::string_view line : nonempty_lines(text)) {
    if (line.substr(0, name.size()) != name) continue;
    std::string_view rest = line.substr(name.size());
    if (rest.empty() || (rest[0] != ' ' && rest[0] != '\t')) continue;  // a longer name
    rest = trim(rest);
    std::string_view value = rest.substr(0, rest.find_first_of(" \t"));
    std::uint64_t n = 0;
    if (value == "unlimited") return *soft = UINT64_MAX, true;
    if (!parse_uint(value, &n)) return fail(err, "bad " + std::string(name) + " " + quote(value));
    *soft = n;
    return true;
  }
  return fail(err, "no " + quote(name) + " row");
}

std::map<std::string, std::string> parse_key_values(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view line : nonempty_lines(text)) {
    std::size_t eq = line.find('=');
    std::string_view key = trim(line.substr(0, eq));
    if (eq == std::string_view::npos || key.empty() || key[0] == '#') continue;
    out[std::string(key)] = std::string(trim(line.substr(eq + 1)));
  }
  return out;
}

bool parse_torch_version_py(std::string_view text, TorchVersionFile* file,
                            std::string* err) {
  std::optional<std::string> version, cuda;
  for (std::string_view line : nonempty_lines(text)) {
    std::string_view name, value;
    if (!assignment(line, &name, &value)) continue;
    if (name == "__version__" && !torch_string(name, value, &version, false, err))
      return false;
    if (name == "cuda" && !torch_string(name, value, &cuda, true, err))
      return false;
  }
  if (!version) return fail(err, "no __version__ in torch/version.py");
  *file = TorchVersionFile{*version, cuda};
  return true;
}

std::vector<std::string> parse_record_paths(std::string_view text) {
  std::vector<std::string> paths;
  for (std::string_view line : nonempty_lines(text)) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line[0] != '"') {
      std::string_view path = line.substr(0, line.find(','));
      if (!path.empty()) paths.emplace_back(path);
      continue;
    }
    std::string path;
    bool closed = false;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] != '"') {
        path += line[i];
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        path += '"';
        ++i;
      } else {
        closed = true;
        break;
      }
    }
    if (closed && !path.empty()) paths.push_back(std::move(path));
  }
  return paths;
}

std::optional<std::string> dist_info_name(std::string_view dir) {
  constexpr std::string_view kSuffix = ".dist-info";
  if (dir.size() <= kSuffix.size() || dir.substr(dir.size() - kSuffix.size()) != kSuffix)
    return std::nullopt;
  std::string_view stem = dir.substr(0, dir.size() - kSuffix.size());
  std::size_t dash = stem.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash + 1 == stem.size()) return std::nullopt;
  std::string_view name = stem.substr(0, dash);
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return std::nullopt;
  return std::string(name);
}

}  // namespace gpuenv
