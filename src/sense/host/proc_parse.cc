#include "sense/host/proc_parse.h"

#include <charconv>

#include "model/gpu_jobs.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

template <typename T>
bool number(std::string_view s, T* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// The space-separated words of `s`.
std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\n') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// The lines of `s`, each without its newline.
std::vector<std::string_view> lines(std::string_view s) {
  std::vector<std::string_view> out = split(s, '\n');
  if (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

// The value after "KEY:" when `line` is that key's line.
std::optional<std::string_view> status_field(std::string_view line, std::string_view key) {
  if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':')
    return std::nullopt;
  return trim(line.substr(key.size() + 1));
}

std::string_view first_word(std::string_view s) {
  std::size_t end = s.find_first_of(" \t");
  return s.substr(0, end);
}

// Whether a /proc/PID/cgroup controller list names `controller`.
bool has_controller(std::string_view list, std::string_view controller) {
  for (std::string_view c : split(list, ','))
    if (c == controller) return true;
  return false;
}

bool is_env_name_kept(std::string_view name) {
  for (const char* kept : kAttributionEnv)
    if (name == kept) return true;
  return false;
}

constexpr long long kCpuLimit = 1 << 20;

// One item of a CPU list: "N" or "A-B"; the CPUs it holds, 0 if it is not one.
long long cpu_range(std::string_view item) {
  std::size_t dash = item.find('-');
  long long lo = 0, hi = 0;
  if (!number(item.substr(0, dash), &lo)) return 0;
  if (dash == std::string_view::npos) hi = lo;
  else if (!number(item.substr(dash + 1), &hi)) return 0;
  if (lo < 0 || hi < lo || hi >= kCpuLimit) return 0;
  return hi - lo + 1;
}

}  // namespace

bool parse_proc_stat(std::string_view text, ProcStat* out, std::string* err) {
  std::size_t open = text.find('('), close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return *err = "no (comm) in /proc/PID/stat", false;
  ProcStat s;
  std::string_view head = text.substr(0, open);
  while (!head.empty() && head.back() == ' ') head.remove_suffix(1);
  if (!number(head, &s.pid) || s.pid <= 0)
    return *err = "the PID before (comm) is not a positive number", false;
  s.comm = std::string(text.substr(open + 1, close - open - 1));
  // After ") ": state(3) ppid(4) ... utime(14) stime(15), counted from 1.
  std::vector<std::string_view> f = words(text.substr(close + 1));
  if (f.size() < 13) return *err = "fewer than 15 fields in /proc/PID/stat", false;
  if (f[0].size() != 1) return *err = "the state is not one letter", false;
  s.state = f[0][0];
  if (!number(f[1], &s.ppid) || s.ppid < 0) return *err = "the parent PID is not a number", false;
  if (!number(f[2], &s.pgrp) || !number(f[3], &s.session))
    return *err = "the process group or session is not a number", false;
  if (!number(f[11], &s.utime) || !number(f[12], &s.stime)) return *err = "utime or stime is not a number", false;
  if (f.size() > 19 && !number(f[19], &s.starttime)) s.starttime = 0;  // starttime(22): kept unknown when odd
  *out = std::move(s);
  return true;
}

std::vector<int> parse_pid_list(std::string_view text) {
  std::vector<int> out;
  for (std::string_view w : words(text)) {
    long long pid = 0;
    if (number(w, &pid) && plausible_pid(pid)) out.push_back(static_cast<int>(pid));
  }
  return out;
}


ProcStatus parse_proc_status(std::string_view text) {
  ProcStatus out;
  for (std::string_view line : lines(text)) {
    std::uint32_t uid = 0;
    int ppid = 0;
    if (auto v = status_field(line, "Uid"); v && number(first_word(*v), &uid)) out.uid = uid;
    if (auto v = status_field(line, "PPid"); v && number(*v, &ppid) && ppid >= 0) out.ppid = ppid;
    if (auto v = status_field(line, "Cpus_allowed_list")) out.cpus_allowed_list = std::string(*v);
  }
  return out;
}

ProcCgroup parse_proc_cgroup(std::string_view text) {
  std::optional<std::string_view> cpuacct, cpu, v2, systemd;
  for (std::string_view line : lines(text)) {
    std::size_t a = line.find(':'), b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos || b + 1 >= line.size() || line[b + 1] != '/') continue;
    std::string_view id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    auto take = [&](std::optional<std::string_view>* slot) { if (!*slot) *slot = path; };
    if (id == "0" && controllers.empty()) take(&v2);
    else if (has_controller(controllers, "cpuacct")) take(&cpuacct);
    else if (has_controller(controllers, "cpu")) take(&cpu);
    else if (has_controller(controllers, "name=systemd")) take(&systemd);
  }
  if (cpuacct || cpu) return {std::string(cpuacct ? *cpuacct : *cpu), 1};
  if (v2) return {std::string(*v2), 2};
  if (systemd) return {std::string(*systemd), 1};
  return {};
}

std::map<std::string, std::string> parse_attribution_env(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view entry : split(text, '\0')) {
    std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos || !is_env_name_kept(entry.substr(0, eq))) continue;
    out.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1, kMaxEnvValueBytes)));
  }
  return out;
}

std::optional<int> cpu_list_count(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  long long count = 0;
  for (std::string_view item : split(text, ',')) {
    long long n = cpu_range(item);
    if (n == 0) return std::nullopt;
    count += n;
    if (count >= kCpuLimit) return std::nullopt;
  }
  return static_cast<int>(count);
}

std::optional<double> parse_cpu_max(std::string_view text) {
  std::vector<std::string_view> f = words(text);
  std::uint64_t quota = 0, period = 0;
  if (f.size() != 2 || !number(f[1], &period) || period == 0 || !number(f[0], &quota)) return std::nullopt;
  return double(quota) / double(period);
}

std::optional<std::uint64_t> keyed_value(std::string_view text, std::string_view key) {
  for (std::string_view line : lines(text)) {
    std::vector<std::string_view> f = words(line);
    std::uint64_t v = 0;
    if (f.size() == 2 && f[0] == key && number(f[1], &v)) return v;
  }
  return std::nullopt;
}

std::optional<std::int64_t> single_integer(std::string_view text) {
  std::int64_t v = 0;
  if (!number(trim(text), &v)) return std::nullopt;
  return v;
}

bool plausible_pid(long long pid) { return pid > 0 && pid < (1LL << 22); }

}  // namespace gpuenv
