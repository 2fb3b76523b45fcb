#include "decide/launch.h"

namespace gpuenv {
namespace {

std::optional<int> read(const Options& o, const char* name, int min, LaunchEnv* out) {
  const std::string* raw = o.getenv(name);
  if (!raw) return std::nullopt;
  std::optional<int> v = parse_count(*raw);
  if (v && *v >= min) return v;
  out->malformed[name] = std::string(name) + "=" + *raw + " is not " +
                         (min > 0 ? "a positive integer" : "a non-negative integer");
  return std::nullopt;
}

}  // namespace

std::optional<int> parse_count(const std::string& s) {
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoi(s);
}

LaunchEnv launch_env(const Options& o) {
  LaunchEnv l;
  l.has_local_rank = o.getenv("LOCAL_RANK") != nullptr;
  l.local_rank = read(o, "LOCAL_RANK", 0, &l);
  l.local_world_size = read(o, "LOCAL_WORLD_SIZE", 1, &l);
  l.world_size = read(o, "WORLD_SIZE", 1, &l);
  return l;
}

}  // namespace gpuenv
