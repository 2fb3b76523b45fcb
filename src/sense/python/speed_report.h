// The job's own speed as gpuenv's Python hook reports it (python/gpuenv_speed.py):
// gpuenv makes a private file, names it in GPUENV_SPEED_FILE, and reads it
// when the job ends. Each line holds the counts so far and CLOCK_MONOTONIC
// times (the clock of std::chrono::steady_clock), and once the job has
// started CUDA its peak of torch.cuda.max_memory_allocated() in bytes:
//   steps=120 batches=121 wait=3.5 peak_mem=33285996544 first_step=812.1 last_step=840.2 first_batch=811.9 last_batch=840.1
// Under --tune the line ends with what the tuning really did (issue 40):
//   ... tuned=persistent_workers=True yours=num_workers=4,pin_memory=True
// (the settings some loader got; those the script passed itself, its values).
// docs/feedback.md describes the figures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/job.h"

namespace gpuenv {

inline constexpr const char* kSpeedFileVar = "GPUENV_SPEED_FILE";

/// One report line's figures; a time not yet seen stays nullopt.
struct SpeedMarks {
  long long steps = 0, batches = 0;
  double wait_s = 0;  // waiting for batches after the first
  std::optional<double> first_step, last_step, first_batch, last_batch;
  std::optional<std::int64_t> peak_mem;  // bytes; nullopt: the job never started CUDA (or no torch)
  std::optional<std::string> tuned;      // --tune's settings applied ("" none); nullopt: not reported
  std::string yours;                     // the settings the script passed itself, its values (every watched run)
};

/// The last complete line (ended by a newline) that reads: counts and times
/// non-negative and finite, each last time not before its first, peak_mem a
/// whole number of bytes up to kMaxPeakMemoryBytes (model/job.h), tuned= and
/// yours= settings texts (model/tune_profile.h; yours= up to kMaxScriptWorkers
/// workers). Words it does not know are skipped; nullopt when no line reads.
std::optional<SpeedMarks> parse_speed_report(const std::string& text);

/// The figures of JobSpeed from the marks, the job's start and its end
/// (seconds of the same clock): rates between the first and the last event,
/// the share of that time spent waiting for batches, the time to the first
/// step and from the last step (else batch) to the end.
JobSpeed job_speed(const SpeedMarks& m, double start_s, double end_s);

/// Reads `path` (at most 64 KiB from its end) and removes it; nullopt when
/// it is missing or nothing in it reads.
std::optional<SpeedMarks> read_speed_report(const std::string& path);

}  // namespace gpuenv
