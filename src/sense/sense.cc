#include "sense/sense.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <string_view>

#include "model/env_names.h"
#include "sys/fs.h"
#include "sys/text.h"
#include "sense/measurements.h"
#include "sense/parallel.h"
#include "sense/trace.h"

namespace gpuenv {
namespace {
constexpr std::size_t kMaxBaseImageEnvBytes = 1 << 20;
}  // namespace

std::map<std::string, std::string> sense_env() {
  std::map<std::string, std::string> env;
  for (const auto& name : steering_env_names())
    if (const char* v = std::getenv(name.c_str())) env[name] = v;
  return env;
}

std::map<std::string, std::string> read_base_image_env(const std::string& path) {
  std::map<std::string, std::string> env;
  std::string text, err;
  if (path.empty() || !fs::read_head(path, kMaxBaseImageEnvBytes + 1, &text, &err) ||
      text.size() > kMaxBaseImageEnvBytes)
    return env;
  const auto& names = steering_env_names();
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    std::string_view entry(text.data() + start, end - start);
    start = end + 1;
    std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name(entry.substr(0, eq));
    if (std::find(names.begin(), names.end(), name) != names.end()) env[name] = std::string(entry.substr(eq + 1));
  }
  return env;
}

Machine sense_machine(const SenseOptions& opts, std::string* torch_why) {
  Machine m;
  m.gpuenv_version = GPUENV_VERSION;
  m.sensed_at = utc_time(std::time(nullptr));
  std::vector<Problem> torch_problems;  // joined to the host's once both are done
  ReadStore store;
  {
    // The host's and torch's files beside NVML's queries: they touch
    // disjoint parts of m (m.host; m.torch; m.nvidia, m.gpus, m.pairs).
    trace::Scope t("sense nvidia + host + torch (wall)");
    Background host([&] {
      trace::Scope th("sense host");
      sense_host(opts, &m.host);
    });
    Background torch([&] {
      trace::Scope tt("sense torch");
      m.torch = sense_torch(opts, torch_why, &torch_problems);
    });
    Background read_store([&] {  // this host's machines': this one's fingerprint needs the GPUs sensed
      trace::Scope ts("read the measurement store");
      if (!opts.store_path.empty()) store = read_measurement_store(opts.store_path, opts.store_patience);
    });
    trace::Scope tn("sense nvidia (all)");
    sense_nvidia(opts, &m);
    host.wait();  // rethrows what the thread threw (bad_alloc), for main
    torch.wait();
    read_store.wait();
  }
  m.host.problems.insert(m.host.problems.end(), torch_problems.begin(), torch_problems.end());
  {
    trace::Scope t("this machine's measurements");
    if (!opts.store_path.empty()) sense_measurements(std::move(store), &m);  // what gpuenv bench stored for this machine
  }
  m.env = sense_env();
  m.base_image_env = read_base_image_env(opts.base_image_env_file);
  if (trace::enabled()) trace::flush();
  return m;
}

}  // namespace gpuenv
