#include "model/fatbin.h"

namespace gpuenv {

TargetVariant target_variant(const FatbinEntry& e) {
  if (e.arch_specific()) return TargetVariant::kArchSpecific;
  return e.family_specific() ? TargetVariant::kFamily : TargetVariant::kPlain;
}

std::string fatbin_target_name(const FatbinEntry& e) {
  if (e.kind == kFatbinKindCubin || e.kind == kFatbinKindPtx)
    return kernel_target_name({e.kind == kFatbinKindPtx, cc_from_arch(e.arch), target_variant(e)});
  std::string prefix = e.kind == kFatbinKindLtoIr ? "lto_" : "kind" + std::to_string(e.kind) + "_";
  std::string suffix = e.arch_specific() ? "a" : e.family_specific() ? "f" : "";
  return prefix + std::to_string(e.arch) + suffix;
}

}  // namespace gpuenv
