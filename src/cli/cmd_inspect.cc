// inspect: count the CUDA code in each file per target, then judge it
// against every GPU of the Machine (decide/kernel_compat.h).
#include "cli/cmd_inspect.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "act/report.h"
#include "cli/exit_codes.h"
#include "decide/arch.h"
#include "decide/kernel_compat.h"
#include "sense/fatbin_file.h"

namespace gpuenv {
namespace {

using nlohmann::json;

// Rows sort as cubins, PTX, LTO-IR, unknown kinds; then by arch and suffix.
struct TargetKey {
  int kind_order = 0;
  int arch = 0;
  int variant = 0;
  std::uint16_t kind = 0;
  auto operator<=>(const TargetKey&) const = default;
};

struct TargetCount {
  std::string name;  // "sm_90a"
  int count = 0, compressed = 0;
  std::set<std::pair<int, int>> isa;  // PTX ISA versions seen
};

struct Counts {
  std::map<TargetKey, TargetCount> targets;
  int fatbins = 0, entries = 0, compressed = 0;
};

// A GPU's verdict on one file: over every target it carries, and per fatbin
// (each is a module the CUDA runtime loads on its own).
struct Verdict {
  std::optional<KernelCompat> compat;  // nullopt: the GPU's capability is unknown
  int fatbins_without_image = 0;
  int fatbins_jit = 0;
};

struct FileReport {
  std::string path;
  std::string error;  // non-empty: unreadable, not ELF, or corrupt
  FatbinFile fatbin;
  bool relocatable = false;  // judged from __nv_relfatbin: the file has no .nv_fatbin
  Counts used;
  std::optional<Counts> device_link;  // __nv_relfatbin beside a .nv_fatbin: not loaded
  std::vector<std::pair<const Gpu*, Verdict>> verdicts;
};

int kind_order(std::uint16_t kind) {
  if (kind == kFatbinKindCubin) return 0;
  if (kind == kFatbinKindPtx) return 1;
  return kind == kFatbinKindLtoIr ? 2 : 3;
}

TargetVariant variant_of(const FatbinEntry& e) {
  if (e.arch_specific()) return TargetVariant::kArchSpecific;
  return e.family_specific() ? TargetVariant::kFamily : TargetVariant::kPlain;
}

void add(Counts* c, const FatbinEntry& e) {
  TargetCount& t = c->targets[{kind_order(e.kind), e.arch, int(variant_of(e)), e.kind}];
  t.name = fatbin_target_name(e);
  ++t.count;
  ++c->entries;
  t.compressed += e.compressed();
  c->compressed += e.compressed();
  if (e.kind == kFatbinKindPtx) t.isa.insert({e.version_major, e.version_minor});
}

Counts count(const FatbinFile& f, bool relocatable) {
  Counts c;
  for (const auto& k : f.containers) c.fatbins += k.relocatable == relocatable;
  for (const auto& e : f.entries)
    if (e.relocatable == relocatable) add(&c, e);
  return c;
}

// The distinct cubin and PTX targets of entries [first, last), in the order
// first seen (a set, not a search of the list: a hostile file's thousands of
// distinct targets stay linear).
std::vector<KernelTarget> targets(const FatbinFile& f, std::size_t first, std::size_t last,
                                  bool relocatable) {
  std::vector<KernelTarget> out;
  std::set<std::tuple<bool, int, int>> seen;
  for (std::size_t i = first; i < last; ++i) {
    const FatbinEntry& e = f.entries[i];
    if (e.relocatable != relocatable || kind_order(e.kind) > 1) continue;
    if (seen.insert({e.kind == kFatbinKindPtx, e.arch, int(variant_of(e))}).second)
      out.push_back({e.kind == kFatbinKindPtx, cc_from_arch(e.arch), variant_of(e)});
  }
  return out;
}

Verdict judge(const FileReport& r, ComputeCapability cc) {
  const FatbinFile& f = r.fatbin;
  Verdict v;
  v.compat = kernel_compat(targets(f, 0, f.entries.size(), r.relocatable), cc);
  for (const auto& c : f.containers) {
    if (c.relocatable != r.relocatable) continue;
    auto t = targets(f, c.first_entry, c.first_entry + c.entry_count, r.relocatable);
    if (t.empty()) continue;  // LTO-IR only: nothing the runtime loads
    KernelVerdict k = kernel_compat(t, cc).verdict;
    v.fatbins_without_image += k == KernelVerdict::kCannotRun;
    v.fatbins_jit += k == KernelVerdict::kPtxJit;
  }
  return v;
}

void judge_all(FileReport* r, const Machine& m) {
  std::map<ComputeCapability, Verdict> by_cc;
  for (const Gpu& g : m.gpus) {
    Verdict v;
    if (auto cc = g.compute_capability) {
      auto it = by_cc.find(*cc);
      if (it == by_cc.end()) it = by_cc.emplace(*cc, judge(*r, *cc)).first;
      v = it->second;
    }
    r->verdicts.push_back({&g, v});
  }
}

FileReport inspect_file(const std::string& path, const Machine& m) {
  FileReport r;
  r.path = path;
  if (!read_fatbin_file(path, &r.fatbin, &r.error)) return r;
  const FatbinFile& f = r.fatbin;
  r.relocatable = f.executable_sections == 0 && f.relocatable_sections > 0;
  r.used = count(f, r.relocatable);
  if (!r.relocatable && f.relocatable_sections > 0) r.device_link = count(f, true);
  if (r.used.entries > 0) judge_all(&r, m);
  return r;
}

int exit_code(const std::vector<FileReport>& reports) {
  bool bad = false, cannot = false, jit = false;
  for (const auto& r : reports) {
    bad |= !r.error.empty();
    for (const auto& [gpu, v] : r.verdicts) {
      if (!v.compat) continue;
      cannot |= v.compat->verdict == KernelVerdict::kCannotRun;
      jit |= v.compat->verdict == KernelVerdict::kPtxJit;
    }
  }
  if (bad) return kExitBadInput;
  return cannot ? kExitFailure : jit ? kExitInspectPtxJit : kExitOk;
}

// --- text ---

std::string isa_list(const std::set<std::pair<int, int>>& isa) {
  std::string out;
  for (const auto& [major, minor] : isa) out += fmt::format("{}{}.{}", out.empty() ? "" : ", ", major, minor);
  return out;
}

std::string count_row(const TargetKey& key, const TargetCount& t) {
  std::string row;
  if (key.kind == kFatbinKindCubin) row = fmt::format("{}: {} cubin{}", t.name, t.count, t.count == 1 ? "" : "s");
  else if (key.kind == kFatbinKindPtx) row = fmt::format("{} PTX (ISA {}): {}", t.name, isa_list(t.isa), t.count);
  else if (key.kind == kFatbinKindLtoIr) row = fmt::format("{} LTO-IR: {}", t.name, t.count);
  else row = fmt::format("{}: {} of an unknown kind", t.name, t.count);
  if (t.compressed) row += fmt::format(", {} compressed", t.compressed);
  return row;
}

std::string count_rows(const Counts& c, const std::string& indent) {
  std::string out;
  for (const auto& [key, t] : c.targets) out += indent + count_row(key, t) + "\n";
  return out;
}

std::string file_line(const FileReport& r) {
  const Counts& c = r.used;
  std::string path = printable(r.path);
  if (c.entries == 0 && r.fatbin.elf_machine == kElfMachineCuda)
    return path + ": a cubin itself (ELF machine EM_CUDA), not a file that embeds fatbins: nothing to count\n";
  if (c.entries == 0 && !r.device_link) return path + ": no CUDA code (no .nv_fatbin section)\n";
  std::string where = r.fatbin.elf ? "ELF" : "fatbin";
  if (r.relocatable) where += ", __nv_relfatbin only (device-link input)";
  return fmt::format("{}: {}, {} fatbin{}, {} entr{} ({} compressed)\n", path, where, c.fatbins,
                     c.fatbins == 1 ? "" : "s", c.entries, c.entries == 1 ? "y" : "ies",
                     c.compressed);
}

std::string device_link_rows(const FileReport& r) {
  if (!r.device_link || r.device_link->entries == 0) return "";
  return fmt::format("  __nv_relfatbin (device-link input, not loaded at run time): {} entries\n",
                     r.device_link->entries) +
         count_rows(*r.device_link, "    ");
}

std::string verdict_word(KernelVerdict v) {
  if (v == KernelVerdict::kNative) return "native";
  return v == KernelVerdict::kPtxJit ? "PTX JIT only" : "cannot run";
}

std::string gpu_label(const Gpu& g, const std::string& indices) {
  std::string name = printable(g.name.value_or("GPU"));
  if (!g.compute_capability) return fmt::format("GPU {} {} (cc unknown)", indices, name);
  return fmt::format("GPU {} {} ({}, {})", indices, name, family_name(*g.compute_capability),
                     cc_string(*g.compute_capability));
}

std::string verdict_text(const Verdict& v, int fatbins, const std::string& cc) {
  if (!v.compat) return ": unknown: the compute capability was not sensed\n";
  std::string out = ": " + verdict_word(v.compat->verdict) + ": " + v.compat->reason + "\n";
  if (v.fatbins_without_image && v.compat->verdict != KernelVerdict::kCannotRun)
    out += fmt::format("      {} of {} fatbins have no image for {} (built only for other targets): "
                       "their kernels fail with \"no kernel image\" if launched\n",
                       v.fatbins_without_image, fatbins, cc);
  if (v.fatbins_jit && v.compat->verdict == KernelVerdict::kNative)
    out += fmt::format("      {} of {} fatbins have only PTX for {}: JIT-compiled when first loaded\n",
                       v.fatbins_jit, fatbins, cc);
  return out;
}

// One line per model: GPUs with the same name and capability share a verdict.
struct GpuGroup {
  std::string key;
  std::vector<int> indices;
  const Gpu* gpu;
  const Verdict* verdict;
};

std::vector<GpuGroup> group_gpus(const FileReport& r) {
  std::vector<GpuGroup> groups;
  for (const auto& [gpu, v] : r.verdicts) {
    auto cc = gpu->compute_capability;
    std::string key = gpu->name.value_or("") + "/" + (cc ? cc_string(*cc) : "?");
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.key == key; });
    if (it == groups.end()) it = groups.insert(groups.end(), {key, {}, gpu, &v});
    it->indices.push_back(gpu->index);
  }
  return groups;
}

std::string verdict_rows(const FileReport& r) {
  std::string out;
  for (const auto& g : group_gpus(r)) {
    auto cc = g.gpu->compute_capability;
    out += "  " + gpu_label(*g.gpu, cpu_list(g.indices)) +
           verdict_text(*g.verdict, r.used.fatbins, cc ? cc_string(*cc) : "?");
  }
  return out;
}

std::string render_text(const std::vector<FileReport>& reports, const Machine& m) {
  std::string out;
  for (const auto& r : reports) {
    if (r.error.empty())  // errors go to stderr
      out += file_line(r) + count_rows(r.used, "  ") + device_link_rows(r) + verdict_rows(r);
  }
  if (m.gpus.empty())
    out += "No NVIDIA GPU found: nothing to check the code against (--machine FILE checks a "
           "snapshot of another machine).\n";
  return out;
}

// --- JSON ---

json counts_json(const Counts& c) {
  json j = {{"fatbins", c.fatbins}, {"entries", c.entries}, {"compressed", c.compressed},
            {"cubins", json::object()}, {"ptx", json::object()}, {"lto_ir", json::object()},
            {"other", json::object()}};
  const char* group[] = {"cubins", "ptx", "lto_ir", "other"};
  for (const auto& [key, t] : c.targets) {
    json row = {{"count", t.count}, {"compressed", t.compressed}};
    if (key.kind == kFatbinKindPtx) {
      row["isa"] = json::array();
      for (const auto& [major, minor] : t.isa) row["isa"].push_back(fmt::format("{}.{}", major, minor));
    }
    j[group[key.kind_order]][t.name] = row;
  }
  return j;
}

json verdict_json(const Gpu& g, const Verdict& v) {
  json j = {{"gpu", g.index}, {"name", g.name ? json(*g.name) : json()},
            {"compute_capability", g.compute_capability ? json(cc_string(*g.compute_capability)) : json()}};
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

json file_json(const FileReport& r) {
  json j = {{"path", r.path}};
  if (!r.error.empty()) {
    j["error"] = r.error;
    return j;
  }
  j["format"] = r.fatbin.elf ? "elf" : "fatbin";
  j["section"] = !r.fatbin.elf ? json() : json(r.relocatable ? "__nv_relfatbin" : ".nv_fatbin");
  j.update(counts_json(r.used));
  if (r.device_link) j["device_link"] = counts_json(*r.device_link);
  j["verdicts"] = json::array();
  for (const auto& [gpu, v] : r.verdicts) j["verdicts"].push_back(verdict_json(*gpu, v));
  return j;
}

std::string render_json(const std::vector<FileReport>& reports) {
  json j = {{"files", json::array()}, {"exit_code", exit_code(reports)}};
  for (const auto& r : reports) j["files"].push_back(file_json(r));
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace

std::function<int()> setup_inspect(CLI::App* sub, Context* ctx) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto as_json = std::make_shared<bool>(false);
  sub->add_option("files", *files, "ELF files (libraries, executables, objects) or raw fatbins")
      ->required()
      ->option_text("FILE...");
  sub->add_flag("--json", *as_json, "The report as JSON");
  ctx->add_common_flags(sub, kFlagMachine | kFlagCuda);
  return [ctx, files, as_json] {
    Machine m;
    if (!ctx->load_machine(&m)) return int(kExitBadInput);
    std::vector<FileReport> reports;
    for (const auto& f : *files) reports.push_back(inspect_file(f, m));
    for (const auto& r : reports)
      if (!r.error.empty()) log_message(Severity::kError, "file", r.error, {{"path", r.path}});
    std::string out = *as_json ? render_json(reports) : render_text(reports, m);
    std::fputs(out.c_str(), stdout);
    return exit_code(reports);
  };
}

}  // namespace gpuenv
