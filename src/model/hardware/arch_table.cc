// The hardware facts per compute capability, in one table that every rule
// reads (docs/architectures.md renders it, with sources per column).
#include "model/hardware/arch_table.h"

namespace gpuenv {
namespace {

constexpr TensorFormats kNone{};
constexpr TensorFormats kVolta{.fp16 = true};
constexpr TensorFormats kAmpere{.fp16 = true, .bf16 = true, .tf32 = true};
constexpr TensorFormats kAda{.fp16 = true, .bf16 = true, .tf32 = true, .fp8 = true};
constexpr TensorFormats kBlackwell{
    .fp16 = true, .bf16 = true, .tf32 = true, .fp8 = true, .fp4 = true};

std::vector<std::string> af(const std::string& sm) { return {sm + "a", sm + "f"}; }

// Sources per column: docs/architectures.md.
std::vector<ArchInfo> build_table() {
  using R = CudaRelease;
  const std::optional<R> kBefore7;               // CUDA 7.0 or earlier; clang's table starts there
  const std::optional<R> kLastPre13 = R{12, 9};  // CUDA 13.0 dropped sm_50..sm_72
  const std::optional<R> kCurrent;
  // clang-format off
  return {
      // cc      family          tensor      nvcc a/f targets  first     last        tegra
      {{5, 0},   "Maxwell",      kNone,      {},               kBefore7, kLastPre13, false,
       "GeForce GTX 750 Ti, Quadro K2200"},
      {{5, 2},   "Maxwell",      kNone,      {},               kBefore7, kLastPre13, false,
       "GeForce GTX 970/980, GTX TITAN X, Tesla M40/M60"},
      {{5, 3},   "Maxwell",      kNone,      {},               kBefore7, kLastPre13, true,
       "Jetson Nano, Jetson TX1"},
      {{6, 0},   "Pascal",       kNone,      {},               R{8, 0},  kLastPre13, false,
       "Tesla P100"},
      {{6, 1},   "Pascal",       kNone,      {},               R{8, 0},  kLastPre13, false,
       "GeForce GTX 1060/1070/1080, TITAN Xp, Tesla P4/P40"},
      {{6, 2},   "Pascal",       kNone,      {},               R{8, 0},  kLastPre13, true,
       "Jetson TX2"},
      {{7, 0},   "Volta",        kVolta,     {},               R{9, 0},  kLastPre13, false,
       "Tesla V100, TITAN V"},
      {{7, 2},   "Volta",        kVolta,     {},               R{9, 1},  kLastPre13, true,
       "Jetson AGX Xavier, Xavier NX"},
      {{7, 5},   "Turing",       kVolta,     {},               R{10, 0}, kCurrent,   false,
       "Tesla T4, GeForce RTX 20xx, GTX 16xx"},
      {{8, 0},   "Ampere",       kAmpere,    {},               R{11, 0}, kCurrent,   false,
       "A100, A30, A800"},
      {{8, 6},   "Ampere",       kAmpere,    {},               R{11, 1}, kCurrent,   false,
       "GeForce RTX 30xx, A10, A40, RTX A6000"},
      {{8, 7},   "Ampere",       kAmpere,    {},               R{11, 4}, kCurrent,   true,
       "Jetson AGX Orin, Orin NX, Orin Nano"},
      {{8, 8},   "Ampere",       kAmpere,    {},               R{13, 0}, kCurrent,   false,
       "no product named publicly (target added in CUDA 13.0)"},
      {{8, 9},   "Ada Lovelace", kAda,       {},               R{11, 8}, kCurrent,   false,
       "GeForce RTX 40xx, L4, L40S, RTX 6000 Ada"},
      {{9, 0},   "Hopper",       kAda,       {"sm_90a"},       R{11, 8}, kCurrent,   false,
       "H100, H200, GH200"},
      {{10, 0},  "Blackwell",    kBlackwell, af("sm_100"),     R{12, 8}, kCurrent,   false,
       "B200, GB200"},
      {{10, 1},  "Blackwell",    kBlackwell, af("sm_101"),     R{12, 8}, R{12, 9},   true,
       "Jetson AGX Thor before CUDA 13.0 (renamed 11.0)"},
      {{10, 3},  "Blackwell",    kBlackwell, af("sm_103"),     R{12, 9}, kCurrent,   false,
       "B300, GB300"},
      {{11, 0},  "Blackwell",    kBlackwell, af("sm_110"),     R{13, 0}, kCurrent,   true,
       "Jetson AGX Thor, DRIVE AGX Thor"},
      {{12, 0},  "Blackwell",    kBlackwell, af("sm_120"),     R{12, 8}, kCurrent,   false,
       "GeForce RTX 50xx, RTX PRO 6000 Blackwell"},
      {{12, 1},  "Blackwell",    kBlackwell, af("sm_121"),     R{12, 9}, kCurrent,   false,
       "GB10 (DGX Spark)"},
  };
  // clang-format on
}

}  // namespace

const std::vector<ArchInfo>& arch_table() {
  static const std::vector<ArchInfo> kTable = build_table();
  return kTable;
}

const ArchInfo* arch_info(ComputeCapability cc) {
  for (const auto& a : arch_table())
    if (a.cc == cc) return &a;
  return nullptr;
}

std::optional<TensorFormats> tensor_formats(ComputeCapability cc) {
  if (const ArchInfo* a = arch_info(cc)) return a->tensor;
  // Tensor cores start with Volta (7.0); the table starts at 5.0 and lists
  // every capability after it, so an older one (Kepler) has none.
  if (cc < arch_table().front().cc) return kNone;
  return std::nullopt;
}

std::string family_name(ComputeCapability cc) {
  const ArchInfo* a = arch_info(cc);
  return a ? a->family : "unknown (cc " + cc_string(cc) + ")";
}

}  // namespace gpuenv
