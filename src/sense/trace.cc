#include "sense/trace.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace gpuenv::trace {
namespace {

struct Total {
  const char* name;
  int calls;
  double ms;
};

std::vector<Total>& totals() {
  static std::vector<Total> t;  // first-seen order
  return t;
}

// Sensing runs GPUs, GPU pairs and the host on several threads at once.
std::mutex& totals_mutex() {
  static std::mutex m;
  return m;
}

Sink& sink() {
  static Sink s = nullptr;
  return s;
}

}  // namespace

bool enabled() {
  static const bool on = std::getenv("GPUENV_TRACE") != nullptr;
  return on;
}

void add(const char* name, double ms) {
  std::lock_guard<std::mutex> lock(totals_mutex());
  for (auto& t : totals())
    if (t.name == name) {
      ++t.calls;
      t.ms += ms;
      return;
    }
  totals().push_back({name, 1, ms});
}

void set_sink(Sink s) { sink() = s; }

void flush() {
  std::lock_guard<std::mutex> lock(totals_mutex());
  for (const auto& t : totals()) {
    if (sink()) sink()(t.name, t.calls, t.ms);
    else std::fprintf(stderr, "gpuenv: trace: %-44s %4d call(s) %8.2f ms\n", t.name, t.calls, t.ms);
  }
  totals().clear();
}

}  // namespace gpuenv::trace
