#include "decide/memory/memory_plan.h"

#include <algorithm>

#include "decide/decide.h"
#include "decide/memory/family.h"
#include "decide/visible.h"
#include "sys/text.h"

namespace gpuenv::memory {
namespace {

constexpr long long kMaxBatch = 1LL << 24;

double peak_of(const Training& t, const GpuTraits& g) { return estimate(t, g).peak_bytes(); }

// What must fit: the allocated peak and what the allocator may strand.
double need_of(const Training& t, const GpuTraits& g, bool expandable) {
  return peak_of(t, g) + stranded_bytes(t, expandable);
}

bool has_expandable_segments(const std::string& conf) {
  return ascii_lower(conf).find("expandable_segments:true") != std::string::npos;
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
  bool pure_measured = t.precision == Precision::kBf16 && t.model.family;
  if ((t.precision == Precision::kFp16Mixed || t.precision == Precision::kBf16 ||
       t.optimizer == Optimizer::kAdafactor) && !(pure_measured && t.optimizer == Optimizer::kAdamW))
    notes.push_back(std::string(precision_name(t.precision)) + " with " +
                    optimizer_name(t.optimizer) +
                    " is modelled from the same terms; the measured tables cover fp32, "
                    "bf16-mixed and (Hugging Face models) pure bf16 with AdamW, and SGD");
  return notes;
}

// The changes that can lower a peak, cheapest first (docs/memory.md, "When it
// does not fit"). Each is tried on top of those kept before it; one is kept
// only when it lowers the peak, and the list ends at the first that fits.
struct Advisor {
  GpuTraits traits;
  double budget;
  int visible;
  bool expandable;
  std::vector<Change> out;
  Training t;

  double need(const Training& u) const { return need_of(u, traits, expandable); }

  // Keeps `u` when it lowers the need; true once it fits.
  bool offer(const std::string& change, const Training& u, const std::string& cost) {
    double before = need(t), after = need(u);
    if (!(after < before * 0.995)) return false;
    t = u;
    out.push_back({change, t, peak_of(t, traits), after <= budget, cost});
    return out.back().fits;
  }

  bool fused() {
    if (t.optimizer != Optimizer::kAdamW || t.fused_optimizer) return false;
    Training u = t;
    u.fused_optimizer = true;
    return offer("fused AdamW", u,
                 "AdamW(fused=True): the same update in one kernel, without foreach's temporaries "
                 "(no slower; usually faster)");
  }

  bool mixed() {
    if (t.precision != Precision::kFp32) return false;
    Training u = t;
    bool bf16 = traits.cc_major >= 8;
    u.precision = bf16 ? Precision::kBf16Mixed : Precision::kFp16Mixed;
    return offer(bf16 ? "bf16-mixed" : "fp16-mixed", u,
                 std::string("matmuls in ") + (bf16 ? "bf16" : "fp16") +
                     " under autocast (faster on tensor cores); weights, gradients and optimizer "
                     "states stay fp32" + (bf16 ? "" : "; fp16 needs a GradScaler"));
  }

  bool micro_batch() {
    long long b = largest_batch(t, traits, budget, expandable);
    if (b < 1 || b >= t.batch) return false;
    long long k = (t.batch + b - 1) / b;
    return offer("batch " + std::to_string(b), with_batch(t, b),
                 "micro-batch " + std::to_string(b) + " with gradient accumulation over " +
                     std::to_string(k) + " micro-batches: the same samples per optimizer step, " +
                     std::to_string(k) + "x the forward/backward passes on smaller batches");
  }

  bool checkpointing() {
    if (t.checkpointing) return false;
    Training u = t;
    u.checkpointing = true;
    return offer("checkpointing", u,
                 "activation checkpointing: each block's forward runs again in backward, about +1 "
                 "forward per step (~+33 % step time)");
  }

  bool pure_bf16() {
    if (traits.cc_major < 8 || t.precision == Precision::kBf16 || t.lora.rank > 0) return false;
    Training u = t;
    u.precision = Precision::kBf16;
    return offer("pure bf16", u,
                 "weights, gradients and optimizer states in bf16 (no fp32 master copy): small "
                 "updates can round away; keep it to fine-tuning, or use stochastic rounding");
  }

  bool lora() {
    if (!t.model.family || t.model.family->moe || t.lora.rank > 0) return false;
    Training u = t;
    u.lora.rank = 16;
    u.lora.targets = t.model.family->fused_qkv ? std::vector<std::string>{"o", "down"}
                                                : std::vector<std::string>{"q", "k", "v", "o"};
    return offer("lora rank 16", u,
                 "peft LoRA: the base frozen, rank-16 adapters trained (a different fine-tune: "
                 "close to full fine-tuning on many tasks, Hu et al. 2021)");
  }

  bool fsdp() {
    if (visible < 2 || t.strategy != Strategy::kDdp) return false;
    Training u = t;
    u.strategy = Strategy::kFsdp;
    u.gpus = std::max<long long>(t.gpus, visible);
    return offer("fsdp over " + std::to_string(u.gpus) + " GPUs", u,
                 "parameters all-gathered and gradients reduce-scattered every step, about 1.5x "
                 "DDP's traffic (modelled, not yet measured)");
  }

  bool offload() {
    if (t.strategy == Strategy::kFsdpOffload) return false;
    Training u = t;
    u.strategy = Strategy::kFsdpOffload;
    return offer("cpu offload", u,
                 "optimizer step on the CPU, parameters and gradients over PCIe every step: often "
                 "several times slower (modelled, not yet measured)");
  }

  std::vector<Change> run(Training start) {
    t = start;
    for (bool (Advisor::*step)() :
         {&Advisor::fused, &Advisor::mixed, &Advisor::micro_batch, &Advisor::checkpointing,
          &Advisor::micro_batch, &Advisor::pure_bf16, &Advisor::lora, &Advisor::micro_batch,
          &Advisor::fsdp, &Advisor::offload, &Advisor::micro_batch})
      if ((this->*step)()) return out;
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
            std::string(name) + "=" + value + (gpuenvs ? " (gpuenv's plan: gpuenv run, env, init)" : " (yours)"), 0,
            gpuenvs};
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
  if ((t.precision == Precision::kBf16 || t.precision == Precision::kBf16Mixed) && traits.cc_major < 8)
    p.notes.push_back(std::string(precision_name(t.precision)) + " needs bf16 tensor cores (compute capability 8.0, Ampere); "
                      "the smallest visible GPU is " + std::to_string(traits.cc_major) +
                      ".x, where bf16 matmuls are emulated or refused: plan --precision fp16-mixed "
                      "(autocast float16 with torch.amp.GradScaler) instead");
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
  if (*p.fits && expandable && p.allocator.from_gpuenv) {
    // Measured on an H100: qwen3 0.6B with LoRA, planned at 73.5 of 74.7 GiB, ran out of memory under
    // the default allocator with the freed 9.3 GiB block stranded, and trained under gpuenv run.
    double stranded = stranded_bytes(t, false);
    if (need + stranded > p.gpu->budget_bytes)
      p.notes.push_back("it fits only with expandable segments: outside gpuenv run, PyTorch's default allocator can "
                        "keep a freed fp32 B x T x V block of " + fixed(stranded / (1 << 30), 1) +
                        " GiB reserved, and the run then needs " + fixed((need + stranded) / (1 << 30), 1) +
                        " GiB of the " + fixed(p.gpu->budget_bytes / (1 << 30), 1) +
                        " GiB budget: run it under gpuenv run, or set PYTORCH_ALLOC_CONF=expandable_segments:True");
  }
  p.largest_batch = largest_batch(t, traits, p.gpu->budget_bytes, expandable);
  if (!*p.fits) p.advice = Advisor{traits, p.gpu->budget_bytes, p.gpu->visible, expandable, {}, t}.run(t);
  return p;
}

}  // namespace gpuenv::memory
