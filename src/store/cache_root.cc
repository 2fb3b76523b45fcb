#include "store/cache_root.h"

namespace gpuenv {

std::string resolve_cache_root(const std::string& flag, const Getenv& getenv) {
  auto var = [&](const char* name) -> std::string {
    const char* v = getenv(name);
    return v ? v : "";
  };
  if (!flag.empty()) return flag;
  if (auto root = var("GPUENV_CACHE_ROOT"); !root.empty()) return root;
  if (auto xdg = var("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/gpuenv";
  if (auto home = var("HOME"); !home.empty()) return home + "/.cache/gpuenv";
  return "";
}

namespace store {

std::string path_in(const std::string& cache_root) {
  if (cache_root.empty()) return "";
  return (cache_root.back() == '/' ? cache_root : cache_root + "/") + "gpuenv.db";
}

std::string chosen_path(const std::string& db_flag, const std::string& cache_root) {
  return db_flag.empty() ? path_in(cache_root) : db_flag;
}

}  // namespace store
}  // namespace gpuenv
