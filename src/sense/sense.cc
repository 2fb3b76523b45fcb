#include "sense/sense.h"

#include <chrono>
#include <cstdio>
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

/// GPUENV_TRACE=1 prints how long each sensing step took, on stderr.
class PhaseTimer {
 public:
  PhaseTimer() : on_(std::getenv("GPUENV_TRACE") != nullptr) {}
  template <typename F>
  void time(const char* name, F&& step) {
    auto start = std::chrono::steady_clock::now();
    step();
    if (!on_) return;
    std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
    std::fprintf(stderr, "gpuenv: trace: sense %s %.2f ms\n", name, ms.count());
  }

 private:
  bool on_;
};

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
  PhaseTimer timer;
  timer.time("nvidia", [&] { sense_nvidia(opts, &m); });
  timer.time("host", [&] { sense_host(opts, &m.host); });
  timer.time("torch", [&] { m.torch = sense_torch(opts); });
  m.env = sense_env();
  return m;
}

}  // namespace gpuenv
