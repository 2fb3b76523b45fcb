#include <gtest/gtest.h>

#include <cstdio>

#include "decide/rules/rules.h"
#include "model/hardware/measured_gains.h"
#include "rule_expect.h"

namespace gpuenv {
namespace {

using namespace gpuenv::testing;

const Env kOn = {{"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1"}, {"GPUENV_TF32", "1"}};
const Env kOff = {{"GPUENV_TF32", "0"}};

MachineBuilder ada_and_pascal() {
  return MachineBuilder().gpus(models::rtx4090()).gpus(models::gtx1080());
}

std::vector<RuleCase> tf32_rows() {
  // clang-format off
  return {
      {"GTX 1080: Pascal", machine::gtx1080(), {}, kOff},
      {"V100: Volta", machine::v100(), {}, kOff},
      {"T4: Turing", machine::t4(), {}, kOff},
      {"A10", machine::a10(), {}, kOn},
      {"8x A100 NVLink", machine::a100_nvlink_8(), {}, kOn},
      {"A100 MIG", machine::a100_mig(), {}, kOn},
      {"RTX 3090 + 4090", machine::rtx3090_4090(), {}, kOn},
      {"L4", machine::l4(), {}, kOn},
      {"H100", machine::h100(), {}, kOn},
      {"H200", machine::h200(), {}, kOn},
      {"B200", machine::b200(), {}, kOn},
      {"RTX 5090", machine::rtx5090(), {}, kOn},
      {"Jetson Orin", machine::jetson_orin(), {}, kOn},
      {"GB10", one_gpu("NVIDIA GB10", {12, 1}), {}, kOn},
      {"Kepler, older than the table: no tensor cores", one_gpu("Tesla K80", {3, 7}), {}, kOff},
      {"no GPU", machine::none(), {}, {}},
      {"mixed box with a Pascal GPU", ada_and_pascal(), {}, kOff},
      {"CUDA_VISIBLE_DEVICES hides the Pascal GPU", ada_and_pascal(),
       {{"CUDA_VISIBLE_DEVICES", "0"}}, kOn},
      {"CUDA_VISIBLE_DEVICES keeps only the Pascal GPU", ada_and_pascal(),
       {{"CUDA_VISIBLE_DEVICES", "1"}}, kOff},
      {"CUDA_VISIBLE_DEVICES hides every GPU", machine::h100(), {{"CUDA_VISIBLE_DEVICES", ""}}, {}},
      {"capability not sensed", without_cc(machine::h100()), {}, {},
       {{kWarn, "TF32 left alone: the compute capability of NVIDIA H100 80GB HBM3 (cc unknown)"}}},
      {"a future GPU beyond the table: not guessed", one_gpu("next", {13, 0}), {}, {},
       {{kWarn, "TF32 left alone: gpuenv does not know the tensor cores of next (cc 13.0)"}}},
  };
  // clang-format on
}

TEST(Tf32, Table) { run_table(rule_tf32, tf32_rows()); }

std::string override_reason(const Machine& m) {
  Decision d = rule_tf32(m, options_for(m));
  const Setting* s = find_setting(d, "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE");
  return s ? s->reason : "(not set)";
}

// The H200 measurement (kTf32Gains, whose figures measured_gains_test.cc
// reads back from docs/performance.md) is cited for H200s only: its ratio
// and both throughputs, worked out here from the two figures.
TEST(Tf32, ReasonCitesTheMeasurementOnlyWhereItWasMade) {
  const MeasuredGain& h200 = kTf32Gains[0];
  ASSERT_EQ(h200.gpu, "NVIDIA H200");
  char ratio[16], throughputs[64];
  std::snprintf(ratio, sizeof ratio, "%.1fx", h200.after / h200.before);
  std::snprintf(throughputs, sizeof throughputs, "(%.1fk -> %.1fk tokens/s)", h200.before / 1e3, h200.after / 1e3);
  std::string why = override_reason(machine::h200(2));
  EXPECT_EQ(why.rfind("fp32 matmuls on TF32 tensor cores (10-bit mantissa, fp32 range) of 2x NVIDIA H200 "
                      "(Hopper, 9.0): ",
                      0),
            0u)
      << why;
  for (const std::string& part : {std::string(": ") + ratio + " for " + std::string(h200.workload) + " ",
                                  std::string(throughputs)})
    EXPECT_NE(why.find(part), std::string::npos) << part << " not in: " << why;
  for (Machine m : {Machine(machine::a100_nvlink_8()), Machine(machine::l4()),
                    Machine(machine::jetson_orin()), Machine(machine::h100())}) {
    std::string why = override_reason(m);
    EXPECT_EQ(why.find("tokens/s"), std::string::npos) << why;
    EXPECT_EQ(why.find("H200"), std::string::npos) << why;
  }
  Machine mixed = MachineBuilder().gpus(models::h200()).gpus(models::h100());
  EXPECT_EQ(override_reason(mixed).find("tokens/s"), std::string::npos);
}

TEST(Tf32, MixedBoxNamesTheGpuThatLacksTf32) {
  Machine m = ada_and_pascal();
  Decision d = rule_tf32(m, options_for(m));
  const Setting* s = find_setting(d, "GPUENV_TF32");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->reason,
            "for scripts: no TF32 tensor cores (Ampere, cc 8.0+) on NVIDIA GeForce GTX 1080 "
            "(Pascal, 6.1), so TORCH_ALLOW_TF32_CUBLAS_OVERRIDE stays unset");
}

// torch 2.9+ (or a torch gpuenv could not read) gets the start-up hook that
// keeps its two TF32 switches in step; older torch and a build without the
// hook get the override alone.
TEST(Tf32, StartUpHookForTorchWithTheNewApi) {
  struct Row {
    const char* what;
    Machine machine;
    std::string hook_dir;
    bool hook;
  } tf32_rows[] = {
      {"torch 2.11", MachineBuilder().gpus(models::h200()).torch("2.11.0+cu130"), "/opt/gpuenv/python", true},
      {"torch 2.9", MachineBuilder().gpus(models::h200()).torch("2.9.0"), "/opt/gpuenv/python", true},
      {"torch 2.8: no new API", MachineBuilder().gpus(models::h200()).torch("2.8.0+cu128"), "/opt/gpuenv/python", false},
      {"torch not found", machine::h200(), "/opt/gpuenv/python", true},
      {"a version gpuenv cannot parse", MachineBuilder().gpus(models::h200()).torch("unknown"), "/h", true},
      {"no hook installed", MachineBuilder().gpus(models::h200()).torch("2.11.0"), "", false},
      {"no TF32: no hook", MachineBuilder().gpus(models::v100()).torch("2.11.0"), "/h", false},
  };
  for (const Row& r : tf32_rows) {
    Options o = options_for(r.machine);
    o.python_hook_dir = r.hook_dir;
    Decision d = rule_tf32(r.machine, o);
    const Setting* s = find_setting(d, "PYTHONPATH");
    EXPECT_EQ(s != nullptr, r.hook) << r.what;
    if (s) {
      EXPECT_EQ(s->value, r.hook_dir) << r.what;
      EXPECT_TRUE(s->search_path) << r.what;
    }
  }
}

// issue 21, 8: a hook another user could change is left off, and said.
TEST(Tf32, ARefusedHookIsANote) {
  Machine m = MachineBuilder().gpus(models::h200()).torch("2.11.0");
  Options o = options_for(m);
  o.python_hook_refused = "/x/python is writable by everyone";
  Decision d = rule_tf32(m, o);
  EXPECT_EQ(find_setting(d, "PYTHONPATH"), nullptr);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].severity, Severity::kWarning);
  EXPECT_NE(d.notes[0].message.find("left off PYTHONPATH: /x/python is writable by everyone"), std::string::npos)
      << d.notes[0].message;
}

// Issue 35: an empty PYTHONPATH of the user's is kept, so the hook is not on
// it while the override stays on: the plan says so, unless --override puts it there.
TEST(Tf32, AnEmptyPythonpathKeptIsANote) {
  Machine m = MachineBuilder().gpus(models::h200()).torch("2.11.0");
  Options o = options_for(m);
  o.python_hook_dir = "/opt/gpuenv/python";
  o.env["PYTHONPATH"] = "";
  Decision d = rule_tf32(m, o);
  ASSERT_NE(find_setting(d, "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"), nullptr);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].severity, Severity::kWarning);
  EXPECT_NE(d.notes[0].message.find("your PYTHONPATH is set empty, and gpuenv keeps it: TF32 stays on"),
            std::string::npos) << d.notes[0].message;
  o.override_user = true;
  EXPECT_TRUE(rule_tf32(m, o).notes.empty());
  o.override_user = false;
  o.env["TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"] = "0";  // yours, kept: TF32 is off, the hook moot
  EXPECT_TRUE(rule_tf32(m, o).notes.empty());
  o.env.erase("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE");
  o.env["PYTHONPATH"] = "/mine";
  EXPECT_TRUE(rule_tf32(m, o).notes.empty());
}

}  // namespace
}  // namespace gpuenv
