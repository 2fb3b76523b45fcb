#include "sense/python/speed_report.h"

#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "model/tune_profile.h"

namespace gpuenv {
namespace {

// 1e12 s (31,000 years of uptime) and 1e15 events: beyond these a figure is no reading.
constexpr double kMaxTime = 1e12;
constexpr double kMaxCount = 1e15;

bool number(const std::string& text, double max, double* out) {
  if (text.empty() || text.size() > 40) return false;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v) || v < 0 || v > max) return false;
  *out = v;
  return true;
}

bool read_line(const std::string& line, SpeedMarks* m) {
  std::size_t pos = 0;
  bool any = false;
  while (pos < line.size()) {
    std::size_t end = line.find(' ', pos);
    if (end == std::string::npos) end = line.size();
    std::string word = line.substr(pos, end - pos);
    pos = end + 1;
    std::size_t eq = word.find('=');
    if (eq == std::string::npos) continue;
    std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "tuned" || key == "yours") {  // --tune's report: settings texts
      if (!tune_settings_problem(value, key == "tuned" ? kMaxTuneWorkers : kMaxScriptWorkers).empty()) return false;
      if (key == "tuned") m->tuned = value;
      else m->yours = value;
      continue;
    }
    static const char* const kKnown[] = {"steps",     "batches",     "wait",       "first_step",
                                         "last_step", "first_batch", "last_batch", "peak_mem"};
    if (std::none_of(std::begin(kKnown), std::end(kKnown), [&](const char* k) { return key == k; })) continue;
    double v = 0;
    bool bytes = key == "peak_mem", count = key == "steps" || key == "batches" || bytes;
    if (!number(value, bytes ? double(kMaxPeakMemoryBytes) : count ? kMaxCount : kMaxTime, &v)) return false;
    if (count && v != std::floor(v)) return false;
    any = true;
    if (bytes) m->peak_mem = std::int64_t(v);
    else if (key == "steps") m->steps = (long long)v;
    else if (key == "batches") m->batches = (long long)v;
    else if (key == "wait") m->wait_s = v;
    else if (key == "first_step") m->first_step = v;
    else if (key == "last_step") m->last_step = v;
    else if (key == "first_batch") m->first_batch = v;
    else if (key == "last_batch") m->last_batch = v;
  }
  auto ordered = [](const std::optional<double>& a, const std::optional<double>& b) {
    return a.has_value() == b.has_value() && (!a || *a <= *b);
  };
  return any && ordered(m->first_step, m->last_step) && ordered(m->first_batch, m->last_batch);
}

std::optional<double> rate(long long n, const std::optional<double>& first, const std::optional<double>& last) {
  if (n < 2 || !first || !last || *last <= *first) return std::nullopt;
  return double(n - 1) / (*last - *first);
}

}  // namespace

std::optional<SpeedMarks> parse_speed_report(const std::string& text) {
  std::size_t end = text.rfind('\n');
  while (end != std::string::npos) {
    std::size_t begin = end == 0 ? std::string::npos : text.rfind('\n', end - 1);
    std::size_t from = begin == std::string::npos ? 0 : begin + 1;
    SpeedMarks m;
    if (read_line(text.substr(from, end - from), &m)) return m;
    if (begin == std::string::npos) break;
    end = begin;
  }
  return std::nullopt;
}

JobSpeed job_speed(const SpeedMarks& m, double start_s, double end_s) {
  JobSpeed s;
  s.steps = m.steps, s.batches = m.batches;
  s.steps_per_s = rate(m.steps, m.first_step, m.last_step);
  s.batches_per_s = rate(m.batches, m.first_batch, m.last_batch);
  if (m.batches >= 2 && m.first_batch && *m.last_batch > *m.first_batch)
    s.data_wait_share = std::clamp(m.wait_s / (*m.last_batch - *m.first_batch), 0.0, 1.0);
  if (m.first_step && *m.first_step >= start_s) s.first_step_s = std::min(*m.first_step - start_s, kMaxJobSeconds);
  std::optional<double> last = m.last_step ? m.last_step : m.last_batch;
  if (last && end_s >= *last) s.exit_tail_s = std::min(end_s - *last, kMaxJobSeconds);
  return s;
}

std::optional<SpeedMarks> read_speed_report(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unlink(path.c_str());
  if (!in) return std::nullopt;
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  constexpr std::streamoff kTail = 65536;
  in.seekg(size > kTail ? size - kTail : 0);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_speed_report(text);
}

}  // namespace gpuenv
