#include "decide/memory/plan.h"

#include <algorithm>
#include <cctype>

#include "decide/decide.h"
#include "decide/visible.h"

namespace gpuenv::memory {
namespace {

constexpr long long kMaxBatch = 1LL << 24;

double peak_of(const Training& t, const GpuTraits& g) { return estimate(t, g).peak_bytes(); }

// What must fit: the allocated peak and what the allocator may strand.
double need_of(const Training& t, const GpuTraits& g, bool expandable) {
  return peak_of(t, g) + stranded_bytes(t, expandable);
}

bool has_expandable_segments(const std::string& conf) {
  std::string v;
  for (char c : conf) v += char(std::tolower(static_cast<unsigned char>(c)));
  return v.find("expandable_segments:true") != std::string::npos;
}

Training with_batch(Training t, long long b) {
  t.batch = b;
  return t;
}

// The smallest visible device's memory and the lowest compute capability
// among them (the kernels every rank can use).
std::optional<GpuBudget> smallest_gpu(const Machine& m, const Options& o, GpuTraits* traits,
                                      std::vector<std::string>* notes) {
  Visibility v = visible_devices(m, o);
  std::optional<GpuBudget> out;
  int unknown = 0;
  for (const auto& d : v.devices) {
    if (d.cc_known()) traits->cc_major = std::min(traits->cc_major, d.cc().major);
    std::optional<std::uint64_t> total =
        d.mig ? d.mig->memory_total_bytes : d.gpu->memory_total_bytes;
    if (!total) {
      ++unknown;
      continue;
    }
    std::string name = d.mig && d.mig->name ? *d.mig->name : d.gpu->name.value_or("GPU");
    if (!out || double(*total) < out->total_bytes) out = GpuBudget{name, double(*total), 0, 0};
  }
  if (unknown > 0)
    notes->push_back(std::to_string(unknown) + " visible device(s) report no memory size: left out");
  if (out) out->visible = int(v.devices.size());
  return out;
}

std::vector<std::string> unmeasured(const Training& t) {
  std::vector<std::string> notes;
  if (t.gpus > 1 || t.strategy != Strategy::kDdp)
    notes.push_back("multi-GPU, FSDP and CPU offload figures are modelled, not yet measured "
                    "(docs/memory.md)");
  if (t.precision == Precision::kFp16Mixed || t.precision == Precision::kBf16 ||
      t.optimizer == Optimizer::kAdafactor)
    notes.push_back(std::string(precision_name(t.precision)) + " with " +
                    optimizer_name(t.optimizer) +
                    " is modelled from the same terms; the measured table covers fp32 and "
                    "bf16-mixed with AdamW and SGD");
  return notes;
}

struct Advisor {
  GpuTraits traits;
  double budget;
  int visible;
  bool expandable;
  std::vector<Change> out;

  // Adds a change on top of the previous ones; true once one fits.
  bool add(const std::string& change, const Training& t, const std::string& cost) {
    bool fits = need_of(t, traits, expandable) <= budget;
    out.push_back({change, t, peak_of(t, traits), fits, cost});
    return fits;
  }

  std::vector<Change> run(Training t) {
    if (t.precision == Precision::kFp32) {
      t.precision = Precision::kBf16Mixed;
      if (add("bf16-mixed", t,
              "matmuls in bf16 under autocast (faster on tensor cores); weights, gradients and "
              "optimizer states stay fp32"))
        return out;
    }
    if (!t.checkpointing) {
      t.checkpointing = true;
      if (add("checkpointing", t,
              "activation checkpointing: each block's forward runs again in backward, about +1 "
              "forward per step (~+33 % step time)"))
        return out;
    }
    if (visible >= 2 && t.strategy == Strategy::kDdp) {
      t.strategy = Strategy::kFsdp;
      t.gpus = std::max<long long>(t.gpus, visible);
      if (add("fsdp over " + std::to_string(t.gpus) + " GPUs", t,
              "parameters all-gathered and gradients reduce-scattered every step, about 1.5x "
              "DDP's traffic (modelled, not yet measured)"))
        return out;
    }
    if (t.strategy != Strategy::kFsdpOffload) {
      t.strategy = Strategy::kFsdpOffload;
      if (add("cpu offload", t,
              "optimizer step on the CPU, parameters and gradients over PCIe every step: often "
              "several times slower (modelled, not yet measured)"))
        return out;
    }
    long long b = largest_batch(t, traits, budget, expandable);
    if (b >= 1 && b < t.batch) {
      long long k = (t.batch + b - 1) / b;
      add("batch " + std::to_string(b), with_batch(t, b),
          "fewer samples per step: accumulate gradients over " + std::to_string(k) +
              " micro-batches for the same tokens per step (" + std::to_string(k) +
              "x the forward/backward passes, no extra memory)");
    }
    return out;
  }
};

}  // namespace

double budget_for(double total_bytes, long long gpus) {
  double left = total_bytes - kContextBytes - (gpus > 1 ? kNcclBytes : 0);
  return std::max(0.0, left * (1 - kAllocatorReserve));
}

double stranded_bytes(const Training& t, bool expandable_segments) {
  if (expandable_segments) return 0;
  return 4.0 * double(t.batch) * double(t.seq) * double(with_defaults(t.model).vocab);
}

AllocatorPlan allocator_plan(const Machine& m, const Options& o) {
  Plan plan = decide(m, o);
  for (const char* name : {"PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"}) {
    const Setting* s = plan.find(name);
    const std::string* user = o.getenv(name);
    if (!s && !user) continue;
    std::string value = s ? s->value : *user;
    bool gpuenvs = s && s->origin != Origin::kKept;
    return {has_expandable_segments(value),
            std::string(name) + "=" + value + (gpuenvs ? " (gpuenv's plan: gpuenv run, env, init)" : " (yours)"), 0};
  }
  return {false, "PYTORCH_ALLOC_CONF not set", 0};
}

long long largest_batch(const Training& t, const GpuTraits& g, double budget, bool expandable) {
  auto fits = [&](long long b) { return need_of(with_batch(t, b), g, expandable) <= budget; };
  if (!fits(1)) return 0;
  long long lo = 1, hi = 2;
  while (hi <= kMaxBatch && fits(hi)) lo = hi, hi *= 2;
  if (hi > kMaxBatch) return lo;
  while (hi - lo > 1) {
    long long mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

MemoryPlan plan_memory(const Machine& m, const Options& o, const Training& t) {
  MemoryPlan p;
  p.training = t;
  GpuTraits traits;
  p.gpu = smallest_gpu(m, o, &traits, &p.notes);
  p.estimate = estimate(t, traits);
  for (auto& n : unmeasured(t)) p.notes.push_back(n);
  if (!p.gpu) {
    p.notes.push_back("no GPU is visible here: the peak is shown, whether it fits is not judged "
                      "(plan for a machine you don't have with --machine FILE)");
    return p;
  }
  if (t.gpus > p.gpu->visible)
    p.notes.push_back("planned for " + std::to_string(t.gpus) + " GPUs; " +
                      std::to_string(p.gpu->visible) + " are visible here");
  p.gpu->budget_bytes = budget_for(p.gpu->total_bytes, t.gpus);
  p.allocator = allocator_plan(m, o);
  bool expandable = p.allocator.expandable_segments;
  p.allocator.stranded_bytes = stranded_bytes(t, expandable);
  if (!expandable)
    p.notes.push_back("without expandable_segments a freed fp32 B x T x V block can stay reserved: it is counted "
                      "against the budget; gpuenv run sets PYTORCH_ALLOC_CONF=expandable_segments:True");
  double need = p.estimate.peak_bytes() + p.allocator.stranded_bytes;
  p.fits = need <= p.gpu->budget_bytes;
  p.margin_bytes = p.gpu->budget_bytes - need;
  p.largest_batch = largest_batch(t, traits, p.gpu->budget_bytes, expandable);
  if (!*p.fits) p.advice = Advisor{traits, p.gpu->budget_bytes, p.gpu->visible, expandable, {}}.run(t);
  return p;
}

}  // namespace gpuenv::memory
