#include <gtest/gtest.h>

#include "builders.h"
#include "decide/rules/rules.h"
#include "rule_expect.h"

namespace gpuenv {
namespace {

using namespace testing;

constexpr std::uint64_t kGiB = 1024ull * 1024 * 1024;
const ExpectedNote kNoNccl = {Severity::kWarning,
                              "NCCL, and so torch.distributed on GPUs, does not work across MIG"};

const ExpectedNote kSetDevice = {Severity::kWarning,
                                 "each rank sees only its own MIG device, as cuda:0: "
                                 "torch.cuda.set_device(LOCAL_RANK) fails on ranks above 0"};

std::string mig_uuid(const Machine& m, int gpu, int i) { return m.gpus.at(gpu).mig_devices.at(i).uuid; }

std::map<std::string, std::string> cvd(const std::string& v) { return {{"CUDA_VISIBLE_DEVICES", v}}; }

TEST(Mig, Table) {
  Machine a = machine::a100_mig();
  std::string u0 = mig_uuid(a, 0, 0), u1 = mig_uuid(a, 0, 1), u2 = mig_uuid(a, 0, 2);
  Machine mixed = MachineBuilder().gpus(models::a100_80gb(), 2).with_mig(1, 2, "3g.40gb", 40 * kGiB);
  std::string whole = *mixed.gpus[0].uuid, m0 = mig_uuid(mixed, 1, 0), m1 = mig_uuid(mixed, 1, 1);
  Machine empty = MachineBuilder().gpus(models::a100_80gb()).with_mig(0, 0, "none", 0);
  std::vector<RuleCase> rows = {
      {"no MIG: nothing", machine::h100(2), {}, {}},
      {"three MIG devices: named by UUID, one used",
       a,
       {},
       cvd(u0 + "," + u1 + "," + u2),
       {{Severity::kWarning, "3 MIG devices are visible but a process uses only one (" + u0 + ")"}, kNoNccl},
       {},
       {{"CUDA_VISIBLE_DEVICES",
         "CUDA uses one MIG device per process, here " + u0 + " (NVIDIA A100-SXM4-80GB MIG 2g.20gb)"}}},
      {"one MIG device chosen by UUID prefix", a, cvd(u1.substr(0, 30)), cvd(u1)},
      {"one MIG device chosen the CUDA 11 way", a, cvd("MIG-" + *a.gpus[0].uuid + "/2/0"), cvd(u1)},
      {"torchrun: each rank its own MIG device",
       a,
       {{"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "3"}},
       cvd(u2),
       {kSetDevice, kNoNccl},
       {},
       {{"CUDA_VISIBLE_DEVICES", "local rank 2 gets MIG device " + u2}}},
      {"torchrun with one rank: no distributed warning",
       a,
       {{"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "1"}},
       cvd(u0)},
      {"torchrun rank past the MIG devices",
       a,
       {{"LOCAL_RANK", "3"}, {"LOCAL_WORLD_SIZE", "4"}},
       {},
       {kNoNccl}},
      {"whole GPU and MIG devices: nothing visible is lost",
       mixed,
       {},
       cvd(whole + "," + m0 + "," + m1),
       {{Severity::kWarning, "2 MIG devices are visible"}, kNoNccl}},
      {"torchrun rank on the whole GPU: left alone",
       mixed,
       {{"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "1"}},
       {}},
      {"torchrun ranks on MIG devices of two GPUs",
       mixed,
       {{"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "3"}},
       cvd(m0),
       {kSetDevice, kNoNccl}},
      {"MIG mode without MIG devices",
       empty,
       {},
       {},
       {{Severity::kWarning,
         "GPU 0 (NVIDIA A100-SXM4-80GB) is in MIG mode with no MIG devices, so CUDA can use nothing on it; "
         "create them with nvidia-smi mig -i 0 -cgi <profile> -C"}}},
  };
  run_table(rule_mig, rows);
}

}  // namespace
}  // namespace gpuenv
