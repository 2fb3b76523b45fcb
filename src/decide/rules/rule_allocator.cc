// allocator: expandable_segments:True in the CUDA caching allocator's
// config, merged into what the user already has. docs/rules/allocator.md
#include "decide/arch.h"
#include "decide/rules/rules.h"
#include "decide/torch_version.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

const std::string kNew = "PYTORCH_ALLOC_CONF";       // torch 2.9+
const std::string kOld = "PYTORCH_CUDA_ALLOC_CONF";  // every torch still reads it
const std::string kExpand = "expandable_segments:True";

// An entry or value without the blanks and stray commas around it.
std::string stripped(std::string_view s) { return std::string(trim(s, " \t,")); }

// "a:1,roundup_power2_divisions:[256:1,>:2],b:2" -> its entries; commas
// inside [...] belong to the entry.
std::vector<std::string> entries(const std::string& conf) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : conf) {
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    if (c == ',' && depth <= 0) {
      out.push_back(stripped(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(stripped(cur));
  return out;
}

std::optional<std::string> value_of(const std::string& conf, const std::string& key) {
  for (const auto& e : entries(conf)) {
    size_t colon = e.find(':');
    if (stripped(e.substr(0, colon)) == key)
      return colon == std::string::npos ? "" : stripped(e.substr(colon + 1));
  }
  return std::nullopt;
}

std::optional<TorchVersion> torch_version(const Machine& m) {
  return m.torch ? parse_torch_version(m.torch->version) : std::nullopt;
}

// Torch before 2.10 honours expandable_segments only under the old name
// (pytorch#183387); otherwise the name the user already uses wins.
std::string pick_name(const std::optional<TorchVersion>& t, const Options& o) {
  bool newer = t && t->at_least(2, 10);
  if (t && !newer) return kOld;
  bool user_new = o.getenv(kNew), user_old = o.getenv(kOld);
  if (user_new != user_old) return user_new ? kNew : kOld;
  return newer ? kNew : kOld;
}

std::string why_name(const Machine& m, const std::optional<TorchVersion>& t,
                     const std::string& name, bool yours) {
  std::string torch = !m.torch ? "no torch found"
                      : !t     ? "torch version \"" + m.torch->version + "\" not understood"
                               : "torch " + m.torch->version;
  if (!t) return torch + ": " + name + (yours ? ", the name you use" : ", which every torch reads");
  if (name == kNew) return torch + " reads " + kNew + ", the new name of " + kOld;
  if (t->at_least(2, 10)) return torch + " still reads " + kOld + ", the name you use";
  if (t->at_least(2, 9)) return torch + " honours expandable_segments only in " + kOld;
  return torch + " reads " + kOld;
}

// Expandable segments are cuMemCreate memory, which cudaIpcGetMemHandle
// cannot share: torch.multiprocessing's CUDA tensors need torch 2.5's
// file-descriptor path (pytorch#130890), which fails where pidfd_getfd is
// refused (pytorch#165685). docs/rules/allocator.md
std::string ipc_caveat(const std::optional<TorchVersion>& t) {
  std::string fix = ": set expandable_segments:False for such jobs";
  if (t && !t->at_least(2, 5))
    return "but torch.multiprocessing cannot share CUDA tensors from them (CUDA IPC) before "
           "torch 2.5" + fix;
  return "but CUDA tensors shared through torch.multiprocessing (CUDA IPC) then need "
         "pidfd_getfd, which fails with \"Operation not permitted\" where ptrace is "
         "restricted (common in containers)" + fix;
}

Note info(std::string message) { return {Severity::kInfo, "", std::move(message)}; }

// Why the allocator must be left alone, if it must.
std::optional<Note> blocker(const Machine& m, const Visibility& v,
                            const std::optional<TorchVersion>& t) {
  for (const auto& d : v.devices)
    if (const ArchInfo* a = arch_info(d.cc()); d.cc_known() && a && a->tegra)
      return info(
          "expandable_segments left off: on Jetson (Tegra) boards its cuMemCreate path "
          "fails with \"CUDA driver error: out of memory\"");
  if (t && !t->at_least(2, 1))
    return Note{Severity::kWarning, "",
                "expandable_segments left off: torch " + m.torch->version +
                    " predates it (2.1) and would reject the option; fix: upgrade torch"};
  return std::nullopt;
}

std::optional<Note> user_blocker(const std::string& name, const std::string& base) {
  if (value_of(base, "expandable_segments"))
    return info("your " + name + " already sets expandable_segments; gpuenv adds nothing");
  if (value_of(base, "backend") == "cudaMallocAsync")
    return info("your " + name + " selects backend:cudaMallocAsync, which has no " +
                "expandable_segments; gpuenv adds nothing");
  return std::nullopt;
}

}  // namespace

Decision rule_allocator(const Machine& m, const Options& o) {
  Decision d;
  Visibility v = visible_devices(m, o);
  if (v.devices.empty()) return d;
  auto t = torch_version(m);
  std::string name = pick_name(t, o);
  std::string base = o.getenv(name) ? stripped(*o.getenv(name)) : "";
  auto stop = blocker(m, v, t);
  if (!stop) stop = user_blocker(name, base);
  if (stop) {
    d.notes.push_back(*stop);
    return d;
  }
  std::string reason =
      "segments that grow in place instead of fixed cached blocks, so "
      "fragmentation stops causing OOMs; ";
  reason += why_name(m, t, name, o.getenv(name));
  if (!base.empty()) reason += "; keeps your " + base;
  reason += "; " + ipc_caveat(t);
  d.settings.push_back(make_setting(name, base.empty() ? kExpand : base + "," + kExpand, reason));
  return d;
}

}  // namespace gpuenv
