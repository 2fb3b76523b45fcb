#include "act/render/inspect_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "act/render/machine_report.h"
#include "decide/arch.h"
#include "model/exit_codes.h"
#include "sys/text.h"

namespace gpuenv {
namespace {

using nlohmann::json;

std::string isa_list(const std::set<std::pair<int, int>>& isa) {
  std::vector<std::string> versions;
  for (const auto& [major, minor] : isa) versions.push_back(fmt::format("{}.{}", major, minor));
  return join(versions, ", ");
}

std::string count_row(const TargetKey& key, const TargetCount& t) {
  std::string row;
  if (key.kind == kFatbinKindCubin)
    row = fmt::format("{}: {} cubin{}", t.name, t.count, t.count == 1 ? "" : "s");
  else if (key.kind == kFatbinKindPtx)
    row = fmt::format("{} PTX (ISA {}): {}", t.name, isa_list(t.isa), t.count);
  else if (key.kind == kFatbinKindLtoIr)
    row = fmt::format("{} LTO-IR: {}", t.name, t.count);
  else
    row = fmt::format("{}: {} of an unknown kind", t.name, t.count);
  if (t.compressed) row += fmt::format(", {} compressed", t.compressed);
  return row;
}

std::string count_rows(const TargetCounts& c, const std::string& indent) {
  std::string out;
  for (const auto& [key, t] : c.targets) out += indent + count_row(key, t) + "\n";
  return out;
}

std::string file_line(const InspectedFile& r) {
  const TargetCounts& c = r.verdict.used;
  std::string path = printable(r.path);
  if (c.entries == 0 && r.fatbin.elf_machine == kElfMachineCuda)
    return path +
           ": a cubin itself (ELF machine EM_CUDA), not a file that embeds fatbins: nothing to "
           "count\n";
  if (c.entries == 0 && !r.verdict.device_link)
    return path + ": no CUDA code (no .nv_fatbin section)\n";
  std::string where = r.fatbin.elf ? "ELF" : "fatbin";
  if (r.verdict.relocatable) where += ", __nv_relfatbin only (device-link input)";
  return fmt::format("{}: {}, {} fatbin{}, {} entr{} ({} compressed)\n", path, where, c.fatbins,
                     c.fatbins == 1 ? "" : "s", c.entries, c.entries == 1 ? "y" : "ies",
                     c.compressed);
}

std::string device_link_rows(const InspectedFile& r) {
  if (!r.verdict.device_link || r.verdict.device_link->entries == 0) return "";
  return fmt::format("  __nv_relfatbin (device-link input, not loaded at run time): {} entries\n",
                     r.verdict.device_link->entries) +
         count_rows(*r.verdict.device_link, "    ");
}

std::string verdict_word(KernelVerdict v) {
  if (v == KernelVerdict::kNative) return "native";
  return v == KernelVerdict::kPtxJit ? "PTX JIT only" : "cannot run";
}

std::string gpu_group_label(const Gpu& g, const std::string& indices) {
  std::string name = printable(g.name.value_or("GPU"));
  if (!g.compute_capability) return fmt::format("GPU {} {} (cc unknown)", indices, name);
  return fmt::format("GPU {} {} ({}, {})", indices, name, family_name(*g.compute_capability),
                     cc_string(*g.compute_capability));
}

std::string verdict_text(const GpuVerdict& v, int fatbins, const std::string& cc) {
  if (!v.compat) return ": unknown: the compute capability was not sensed\n";
  std::string out = ": " + verdict_word(v.compat->verdict) + ": " + v.compat->reason + "\n";
  if (v.fatbins_without_image && v.compat->verdict != KernelVerdict::kCannotRun)
    out += fmt::format(
        "      {} of {} fatbins have no image for {} (built only for other targets): "
        "their kernels fail with \"no kernel image\" if launched\n",
        v.fatbins_without_image, fatbins, cc);
  if (v.fatbins_jit && v.compat->verdict == KernelVerdict::kNative)
    out +=
        fmt::format("      {} of {} fatbins have only PTX for {}: JIT-compiled when first loaded\n",
                    v.fatbins_jit, fatbins, cc);
  return out;
}

// One line per model: GPUs with the same name and capability share a verdict.
struct GpuGroup {
  std::string key;
  std::vector<int> indices;
  const Gpu* gpu;
  const GpuVerdict* verdict;
};

std::vector<GpuGroup> group_gpus(const InspectedFile& r) {
  std::vector<GpuGroup> groups;
  for (const GpuVerdict& v : r.verdict.gpus) {
    auto cc = v.gpu->compute_capability;
    std::string key = v.gpu->name.value_or("") + "/" + (cc ? cc_string(*cc) : "?");
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.key == key; });
    if (it == groups.end()) it = groups.insert(groups.end(), {key, {}, v.gpu, &v});
    it->indices.push_back(v.gpu->index);
  }
  return groups;
}

std::string verdict_rows(const InspectedFile& r) {
  std::string out;
  for (const auto& g : group_gpus(r)) {
    auto cc = g.gpu->compute_capability;
    out += "  " + gpu_group_label(*g.gpu, cpu_list(g.indices)) +
           verdict_text(*g.verdict, r.verdict.used.fatbins, cc ? cc_string(*cc) : "?");
  }
  return out;
}

json counts_json(const TargetCounts& c) {
  json j = {{"fatbins", c.fatbins},     {"entries", c.entries},  {"compressed", c.compressed},
            {"cubins", json::object()}, {"ptx", json::object()}, {"lto_ir", json::object()},
            {"other", json::object()}};
  const char* group[] = {"cubins", "ptx", "lto_ir", "other"};
  for (const auto& [key, t] : c.targets) {
    json row = {{"count", t.count}, {"compressed", t.compressed}};
    if (key.kind == kFatbinKindPtx) {
      row["isa"] = json::array();
      for (const auto& [major, minor] : t.isa)
        row["isa"].push_back(fmt::format("{}.{}", major, minor));
    }
    j[group[key.kind_order]][t.name] = row;
  }
  return j;
}

json verdict_json(const GpuVerdict& v) {
  const Gpu& g = *v.gpu;
  json j = {{"gpu", g.index},
            {"name", g.name ? json(*g.name) : json()},
            {"compute_capability",
             g.compute_capability ? json(cc_string(*g.compute_capability)) : json()}};
  if (!v.compat) {
    j["verdict"] = "unknown";
    return j;
  }
  j["verdict"] = verdict_name(v.compat->verdict);
  j["image"] = v.compat->image ? json(kernel_target_name(*v.compat->image)) : json();
  j["reason"] = v.compat->reason;
  j["fatbins_without_image"] = v.fatbins_without_image;
  j["fatbins_jit"] = v.fatbins_jit;
  return j;
}

json file_json(const InspectedFile& r) {
  json j = {{"path", r.path}};
  if (!r.error.empty()) {
    j["error"] = r.error;
    return j;
  }
  j["format"] = r.fatbin.elf ? "elf" : "fatbin";
  j["section"] =
      !r.fatbin.elf ? json() : json(r.verdict.relocatable ? "__nv_relfatbin" : ".nv_fatbin");
  j.update(counts_json(r.verdict.used));
  if (r.verdict.device_link) j["device_link"] = counts_json(*r.verdict.device_link);
  j["verdicts"] = json::array();
  for (const GpuVerdict& v : r.verdict.gpus) j["verdicts"].push_back(verdict_json(v));
  return j;
}

}  // namespace

std::string render_inspect(const std::vector<InspectedFile>& files, const Machine& m) {
  std::string out;
  for (const auto& r : files) {
    if (r.error.empty())  // errors go to stderr
      out +=
          file_line(r) + count_rows(r.verdict.used, "  ") + device_link_rows(r) + verdict_rows(r);
  }
  if (m.gpus.empty())
    out +=
        "No NVIDIA GPU found: nothing to check the code against (--machine FILE checks a "
        "snapshot of another machine).\n";
  return out;
}

int inspect_exit_code(const std::vector<InspectedFile>& files) {
  bool bad = false, cannot = false, jit = false;
  for (const auto& r : files) {
    bad |= !r.error.empty();
    std::optional<KernelVerdict> worst = worst_verdict(r.verdict);
    cannot |= worst == KernelVerdict::kCannotRun;
    jit |= worst == KernelVerdict::kPtxJit;
  }
  if (bad) return kExitBadInput;
  return cannot ? kExitFailure : jit ? kExitInspectPtxJit : kExitOk;
}

json inspect_json(const std::vector<InspectedFile>& files, int exit_code) {
  json j = {{"files", json::array()}, {"exit_code", exit_code}};
  for (const auto& r : files) j["files"].push_back(file_json(r));
  return j;
}

json report_json(const InspectReport& r) { return inspect_json(r.files, inspect_exit_code(r.files)); }
std::string report_text(const InspectReport& r, const Style&) { return render_inspect(r.files, r.machine); }

}  // namespace gpuenv
