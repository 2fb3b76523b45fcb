#include "decide/kernel_verdict.h"

#include <tuple>

namespace gpuenv {
namespace {

int kind_order(std::uint16_t kind) {
  if (kind == kFatbinKindCubin) return 0;
  if (kind == kFatbinKindPtx) return 1;
  return kind == kFatbinKindLtoIr ? 2 : 3;
}

void add(TargetCounts* c, const FatbinEntry& e) {
  TargetCount& t = c->targets[{kind_order(e.kind), e.arch, int(target_variant(e)), e.kind}];
  t.name = fatbin_target_name(e);
  ++t.count;
  ++c->entries;
  t.compressed += e.compressed();
  c->compressed += e.compressed();
  if (e.kind == kFatbinKindPtx) t.isa.insert({e.version_major, e.version_minor});
}

TargetCounts count(const FatbinFile& f, bool relocatable) {
  TargetCounts c;
  for (const auto& k : f.containers) c.fatbins += k.relocatable == relocatable;
  for (const auto& e : f.entries)
    if (e.relocatable == relocatable) add(&c, e);
  return c;
}

// The distinct cubin and PTX targets of entries [first, last) in the section
// judged, in the order first seen (a set, not a search of the list: a hostile
// file's thousands of distinct targets stay linear).
std::vector<KernelTarget> kernel_targets(const FatbinFile& f, std::size_t first, std::size_t last,
                                         bool relocatable) {
  std::vector<KernelTarget> out;
  std::set<std::tuple<bool, int, int>> seen;
  for (std::size_t i = first; i < last; ++i) {
    const FatbinEntry& e = f.entries[i];
    if (e.relocatable != relocatable || kind_order(e.kind) > 1) continue;
    if (seen.insert({e.kind == kFatbinKindPtx, e.arch, int(target_variant(e))}).second)
      out.push_back({e.kind == kFatbinKindPtx, cc_from_arch(e.arch), target_variant(e)});
  }
  return out;
}

GpuVerdict judge(const FatbinFile& f, bool relocatable, ComputeCapability cc) {
  GpuVerdict v;
  v.compat = kernel_compat(kernel_targets(f, 0, f.entries.size(), relocatable), cc);
  for (const auto& c : f.containers) {
    if (c.relocatable != relocatable) continue;
    auto t = kernel_targets(f, c.first_entry, c.first_entry + c.entry_count, relocatable);
    if (t.empty()) continue;  // LTO-IR only: nothing the runtime loads
    KernelVerdict k = kernel_compat(t, cc).verdict;
    v.fatbins_without_image += k == KernelVerdict::kCannotRun;
    v.fatbins_jit += k == KernelVerdict::kPtxJit;
  }
  return v;
}

// Each capability is judged once, however many GPUs share it.
std::vector<GpuVerdict> judge_all(const FatbinFile& f, bool relocatable, const Machine& m) {
  std::map<ComputeCapability, GpuVerdict> by_cc;
  std::vector<GpuVerdict> out;
  for (const Gpu& g : m.gpus) {
    GpuVerdict v;
    if (auto cc = g.compute_capability) {
      auto it = by_cc.find(*cc);
      if (it == by_cc.end()) it = by_cc.emplace(*cc, judge(f, relocatable, *cc)).first;
      v = it->second;
    }
    v.gpu = &g;
    out.push_back(v);
  }
  return out;
}

}  // namespace

BinaryVerdict judge_binary(const FatbinFile& f, const Machine& m) {
  BinaryVerdict v;
  v.relocatable = f.relfatbin_only();
  v.used = count(f, v.relocatable);
  if (!v.relocatable && f.relocatable_sections > 0) v.device_link = count(f, true);
  if (v.used.entries > 0) v.gpus = judge_all(f, v.relocatable, m);
  return v;
}

std::optional<KernelVerdict> worst_verdict(const BinaryVerdict& v) {
  std::optional<KernelVerdict> worst;
  for (const GpuVerdict& g : v.gpus) {
    if (!g.compat) continue;
    KernelVerdict k = g.compat->verdict;
    bool worse = !worst || k == KernelVerdict::kCannotRun ||
                 (k == KernelVerdict::kPtxJit && *worst == KernelVerdict::kNative);
    if (worse) worst = k;
  }
  return worst;
}

}  // namespace gpuenv
