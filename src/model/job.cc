#include "model/job.h"

#include <algorithm>

namespace gpuenv {

const char* metric_name(Metric m) {
  static const char* const kNames[kMetricCount] = {
      "util_pct", "mem_mib",   "power_w",   "sm_mhz",      "pcie_rx_mbs", "pcie_tx_mbs",
      "thermal",  "power_cap", "cpu_cores", "top_cpu_cores", "workers",   "other_gpu_mem_mib",
      "sm_active_pct", "tensor_active_pct", "fp32_active_pct", "fp16_active_pct", "dram_active_pct",
      "sm_occupancy_pct"};
  return m >= 0 && m < kMetricCount ? kNames[m] : "?";
}

void Stat::add(double x) {
  Stat one;
  one.n = 1, one.min = one.mean = one.max = x;
  merge(one);
}

void Stat::merge(const Stat& o) {
  if (o.n == 0) return;
  if (n == 0) {
    *this = o;
    return;
  }
  min = std::min(min, o.min), max = std::max(max, o.max);
  mean = (mean * n + o.mean * o.n) / (n + o.n);
  n += o.n;
}

namespace {

void merge_point(TimelinePoint* into, const TimelinePoint& p) {
  if (into->samples == 0) into->t0 = p.t0;
  into->t1 = p.t1;
  into->samples += p.samples;
  for (int m = 0; m < kMetricCount; ++m) into->s[m].merge(p.s[m]);
  into->clock_events |= p.clock_events;
}

}  // namespace

void Timeline::add(const JobSample& s) {
  if (points_.empty() || points_.back().samples >= width_) {
    if (points_.size() == kMaxTimelinePoints) halve();
    if (points_.empty() || points_.back().samples >= width_) points_.emplace_back();
  }
  TimelinePoint one;
  one.t0 = one.t1 = s.t;
  one.samples = 1;
  for (int m = 0; m < kMetricCount; ++m)
    if (s.v[m]) one.s[m].add(*s.v[m]);
  one.clock_events = s.clock_events.value_or(0);
  merge_point(&points_.back(), one);
}

void Timeline::halve() {
  std::vector<TimelinePoint> merged;
  for (std::size_t i = 0; i < points_.size(); i += 2) {
    TimelinePoint p = points_[i];
    if (i + 1 < points_.size()) merge_point(&p, points_[i + 1]);
    merged.push_back(p);
  }
  points_ = std::move(merged);
  width_ *= 2;
}

std::array<Stat, kMetricCount> Timeline::totals() const {
  std::array<Stat, kMetricCount> out{};
  for (const auto& p : points_)
    for (int m = 0; m < kMetricCount; ++m) out[m].merge(p.s[m]);
  return out;
}

Timeline Timeline::from_points(std::vector<TimelinePoint> points, int width) {
  Timeline t;
  t.points_ = std::move(points);
  t.width_ = std::max(1, width);
  while (t.points_.size() > kMaxTimelinePoints) t.halve();
  return t;
}

}  // namespace gpuenv
