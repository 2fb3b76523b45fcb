#include "model/gpu_label.h"

namespace gpuenv {

std::string gpu_label(const Gpu& g) {
  return "GPU " + std::to_string(g.index) + (g.name ? " (" + *g.name + ")" : "");
}

}  // namespace gpuenv
