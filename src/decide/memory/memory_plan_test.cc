#include "decide/memory/memory_plan.h"

#include <gtest/gtest.h>

#include "builders.h"

namespace gpuenv::memory {
namespace {

Training llama_1b(long long batch, Precision p = Precision::kBf16Mixed) {
  Training t;
  t.model = {Arch::kLlama, 2048, 16, 32, 8, 8192, 128256, 0, 1};
  t.seq = 2048;
  t.batch = batch;
  t.precision = p;
  return t;
}

Options no_env() { return {}; }

TEST(MemoryEstimate, ThePeakIsTheLargestPhaseAndItsComponentsSumToIt) {
  Estimate e = estimate(llama_1b(2), {});
  ASSERT_GE(e.phases.size(), 4u);
  for (const auto& ph : e.phases) EXPECT_LE(ph.bytes.total(), e.peak_bytes()) << ph.name;
  const Breakdown& b = e.peak_phase().bytes;
  EXPECT_GT(b.weights, 0);
  EXPECT_GT(b.activations, 0);
  EXPECT_DOUBLE_EQ(b.total(), e.peak_bytes());
}

TEST(MemoryEstimate, EachLeverLowersThePeak) {
  Training t = llama_1b(4, Precision::kFp32);
  t.model.kv_heads = 32;  // MHA: a fused kernel in fp32 too
  double fp32 = estimate(t, {}).peak_bytes();
  t.precision = Precision::kBf16Mixed;
  double mixed = estimate(t, {}).peak_bytes();
  t.checkpointing = true;
  double ckpt = estimate(t, {}).peak_bytes();
  t.strategy = Strategy::kFsdp;
  t.gpus = 8;
  double fsdp = estimate(t, {}).peak_bytes();
  t.strategy = Strategy::kFsdpOffload;
  double offload = estimate(t, {}).peak_bytes();
  EXPECT_LT(mixed, fp32);
  EXPECT_LT(ckpt, mixed);
  EXPECT_LT(fsdp, ckpt);
  EXPECT_LT(offload, fsdp);
}

TEST(MemoryEstimate, Fp32WithGroupedHeadsRunsTheMathKernel) {
  Training t = llama_1b(1, Precision::kFp32);
  Estimate math = estimate(t, {});
  EXPECT_EQ(math.attention, Attention::kMath);
  t.attention = Attention::kFused;
  Estimate fused = estimate(t, {});
  // Per layer the math kernel saves B x H x T x T scores (4 B each) and k, v
  // expanded to all 32 heads; the fused one k, v as they are and logsumexp.
  double n = 2048, scores = 32 * n * n * 4, kv = 2 * 4 * n * (2048 - 512), lse = 4 * 32 * n;
  EXPECT_DOUBLE_EQ(math.phases[1].bytes.activations - fused.phases[1].bytes.activations,
                   16 * (scores + kv - lse));
  EXPECT_EQ(estimate(llama_1b(1), {}).attention, Attention::kFused);          // flash, bf16
  EXPECT_EQ(estimate(llama_1b(1), GpuTraits{7}).attention, Attention::kMath);  // no bf16 kernel
}

Training gpt2_124m(Precision p, Loop loop) {
  Training t;
  t.model = {Arch::kGpt2, 768, 12, 12, 0, 0, 50257};
  t.seq = 1024;
  t.batch = 8;
  t.precision = p;
  t.loop = loop;
  return t;
}

// A loop that keeps the model's outputs (nanoGPT's `logits, loss =
// model(X, Y)`) holds one B x T x V logits tensor in the compute dtype more
// than one that keeps only the loss, in every phase; the default keeps it.
TEST(MemoryEstimate, KeepingTheLogitsAddsOneComputeDtypeLogitsTensorToEveryPhase) {
  const std::pair<Precision, double> rows[] = {{Precision::kFp32, 4.0 * 8 * 1024 * 50257},
                                               {Precision::kBf16Mixed, 2.0 * 8 * 1024 * 50257}};
  for (const auto& [precision, held] : rows) {
    Estimate keeps = estimate(gpt2_124m(precision, Loop::kKeepsLogits), {});
    Estimate frees = estimate(gpt2_124m(precision, Loop::kFreesLogits), {});
    ASSERT_EQ(keeps.phases.size(), frees.phases.size());
    EXPECT_EQ(frees.peak_phase().name, "backward_at_loss") << precision_name(precision);
    EXPECT_EQ(keeps.peak_phase().name, "backward_at_loss") << precision_name(precision);
    EXPECT_DOUBLE_EQ(keeps.peak_bytes() - frees.peak_bytes(), held) << precision_name(precision);
    for (size_t i = 0; i < keeps.phases.size(); ++i) {
      EXPECT_DOUBLE_EQ(keeps.phases[i].bytes.held_logits, held) << keeps.phases[i].name;
      EXPECT_EQ(frees.phases[i].bytes.held_logits, 0) << frees.phases[i].name;
      EXPECT_DOUBLE_EQ(keeps.phases[i].bytes.total() - frees.phases[i].bytes.total(), held)
          << keeps.phases[i].name;
    }
    Training given = gpt2_124m(precision, Loop::kKeepsLogits);
    Training plain;
    plain.model = given.model, plain.seq = 1024, plain.batch = 8, plain.precision = precision;
    EXPECT_EQ(plain.loop, Loop::kKeepsLogits);
    EXPECT_DOUBLE_EQ(estimate(plain, {}).peak_bytes(), keeps.peak_bytes());
  }
}

// The largest batch is searched with the loop planned: keeping the logits
// never allows a larger batch than freeing them.
TEST(MemoryPlan, TheLargestBatchIsSearchedWithTheLoopPlanned) {
  Machine m = testing::machine::h100(1);
  MemoryPlan keeps = plan_memory(m, no_env(), gpt2_124m(Precision::kFp32, Loop::kKeepsLogits));
  MemoryPlan frees = plan_memory(m, no_env(), gpt2_124m(Precision::kFp32, Loop::kFreesLogits));
  ASSERT_TRUE(keeps.largest_batch && frees.largest_batch);
  EXPECT_LT(*keeps.largest_batch, *frees.largest_batch);
  Training next = gpt2_124m(Precision::kFp32, Loop::kKeepsLogits);
  next.batch = *keeps.largest_batch + 1;
  EXPECT_GT(estimate(next, {}).peak_bytes() + stranded_bytes(next, keeps.allocator.expandable_segments),
            keeps.gpu->budget_bytes);
}

TEST(MemoryPlan, TheLargestBatchFitsAndTheNextDoesNot) {
  Machine m = testing::machine::h200();
  MemoryPlan p = plan_memory(m, no_env(), llama_1b(2));
  ASSERT_TRUE(p.gpu);
  EXPECT_EQ(p.gpu->total_bytes, 143771.0 * 1024 * 1024);
  EXPECT_EQ(p.gpu->budget_bytes, budget_for(p.gpu->total_bytes, 1));
  ASSERT_TRUE(p.fits && *p.fits);
  EXPECT_TRUE(p.advice.empty());
  long long b = *p.largest_batch;
  ASSERT_GT(b, 2);
  EXPECT_LE(estimate(llama_1b(b), {}).peak_bytes(), p.gpu->budget_bytes);
  EXPECT_GT(estimate(llama_1b(b + 1), {}).peak_bytes(), p.gpu->budget_bytes);
}

TEST(MemoryPlan, AdviceComesCheapestFirstAndStopsAtTheFirstThatFits) {
  // 16 GB T4 (no bf16: fp16-mixed is offered): llama 1B fp32 at batch 8;
  // a smaller micro-batch with accumulation is cheaper than checkpointing.
  MemoryPlan p = plan_memory(testing::machine::t4(), no_env(), llama_1b(8, Precision::kFp32));
  ASSERT_TRUE(p.fits);
  EXPECT_FALSE(*p.fits);
  std::vector<std::string> changes;
  for (const auto& c : p.advice) changes.push_back(c.change);
  ASSERT_GE(changes.size(), 2u);
  EXPECT_EQ(changes[0], "fp16-mixed");
  EXPECT_EQ(changes[1], "checkpointing");
  EXPECT_EQ(changes.back().rfind("batch ", 0), 0u) << changes.back();
  for (size_t i = 1; i < p.advice.size(); ++i)
    EXPECT_LT(p.advice[i].peak_bytes, p.advice[i - 1].peak_bytes) << changes[i];
  for (size_t i = 0; i + 1 < p.advice.size(); ++i) EXPECT_FALSE(p.advice[i].fits);
  EXPECT_TRUE(p.advice.back().fits) << p.advice.back().change;
  for (const auto& c : changes) EXPECT_EQ(c.rfind("fsdp", 0), std::string::npos);  // one GPU
}

TEST(MemoryPlan, FsdpIsOfferedOverTheVisibleGpusWhenNothingOnOneGpuFits) {
  // A 13 B shape at batch 1: even pure bf16 weights and states exceed 80 GB.
  Training t = llama_1b(1);
  t.model = {Arch::kLlama, 5120, 40, 40, 40, 13824, 32000, 0, 0};
  t.fused_optimizer = true;
  t.checkpointing = true;
  MemoryPlan p = plan_memory(testing::machine::h100(8), no_env(), t);
  ASSERT_FALSE(*p.fits);
  ASSERT_FALSE(p.advice.empty());
  EXPECT_EQ(p.advice.back().change, "fsdp over 8 GPUs");
  EXPECT_EQ(p.advice.back().training.gpus, 8);
  EXPECT_TRUE(p.advice.back().fits);
}

// FSDP MixedPrecision(param_dtype=bf16): fp32 shards, bf16 gathered units
// and activations, no autocast copies; less than bf16-mixed under FSDP.
TEST(MemoryPlan, FsdpMixedPrecisionGathersBf16AndCastsNothing) {
  Training t = llama_1b(4);
  t.gpus = 8;
  t.strategy = Strategy::kFsdp;
  Training mp = t;
  mp.precision = Precision::kFp32;
  mp.fsdp_bf16 = true;
  ASSERT_EQ(training_problem(mp), "");
  Estimate a = estimate(t, {}), b = estimate(mp, {});
  EXPECT_LT(b.peak_bytes(), a.peak_bytes());
  EXPECT_DOUBLE_EQ(a.phases[0].bytes.weights, b.phases[0].bytes.weights);  // fp32 shards in both
  EXPECT_LT(b.phases[0].bytes.temporaries, a.phases[0].bytes.temporaries);   // no bf16 copies cached
  mp.strategy = Strategy::kDdp;
  EXPECT_NE(training_problem(mp).find("needs --strategy fsdp"), std::string::npos);
  mp.strategy = Strategy::kFsdp;
  mp.precision = Precision::kBf16Mixed;
  EXPECT_NE(training_problem(mp).find("replaces --precision"), std::string::npos);
}

TEST(MemoryPlan, Bf16OnAGpuWithoutItSaysToPlanFp16) {
  MemoryPlan p = plan_memory(testing::machine::t4(), no_env(), llama_1b(1));
  bool said = false;
  for (const auto& n : p.notes) said = said || n.find("plan --precision fp16-mixed") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(MemoryPlan, WithoutAGpuThePeakIsGivenAndFitIsNotJudged) {
  MemoryPlan p = plan_memory(testing::machine::none(), no_env(), llama_1b(2));
  EXPECT_FALSE(p.gpu);
  EXPECT_FALSE(p.fits);
  EXPECT_FALSE(p.largest_batch);
  EXPECT_GT(p.estimate.peak_bytes(), 0);
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes.back().find("no GPU is visible"), std::string::npos);
}

TEST(MemoryPlan, AMigDeviceBudgetsItsOwnMemoryNotTheWholeGpu) {
  Machine m = testing::machine::a100_mig();
  MemoryPlan p = plan_memory(m, no_env(), llama_1b(1));
  ASSERT_TRUE(p.gpu);
  ASSERT_FALSE(m.gpus[0].mig_devices.empty());
  EXPECT_EQ(p.gpu->total_bytes, double(*m.gpus[0].mig_devices[0].memory_total_bytes));
  EXPECT_LT(p.gpu->total_bytes, double(*m.gpus[0].memory_total_bytes));
}

}  // namespace
}  // namespace gpuenv::memory
