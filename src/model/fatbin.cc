#include "model/fatbin.h"

namespace gpuenv {

std::string fatbin_target_name(const FatbinEntry& e) {
  std::string prefix = e.kind == kFatbinKindCubin   ? "sm_"
                       : e.kind == kFatbinKindPtx   ? "compute_"
                       : e.kind == kFatbinKindLtoIr ? "lto_"
                                                    : "kind" + std::to_string(e.kind) + "_";
  std::string suffix = e.arch_specific() ? "a" : e.family_specific() ? "f" : "";
  return prefix + std::to_string(e.arch) + suffix;
}

}  // namespace gpuenv
