#include "sense/sense.h"

#include <cstdlib>
#include <ctime>

#include "model/env_names.h"

namespace gpuenv {
namespace {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::map<std::string, std::string> sense_env() {
  std::map<std::string, std::string> env;
  for (const auto& name : steering_env_names())
    if (const char* v = std::getenv(name.c_str())) env[name] = v;
  return env;
}

Machine sense_machine(const SenseOptions& opts) {
  Machine m;
  m.gpuenv_version = GPUENV_VERSION;
  m.sensed_at = utc_now();
  sense_nvidia(opts, &m);
  sense_host(opts, &m.host);
  m.torch = sense_torch(opts);
  m.env = sense_env();
  return m;
}

}  // namespace gpuenv
