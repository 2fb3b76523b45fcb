// What `gpuenv init` reports at start: a short banner for people, or JSON
// lines for log collectors (--log-format json), as LogEvents (act/log.h).
// Both go to stderr: stdout belongs to the command.
#pragma once

#include <string>
#include <vector>

#include "act/log.h"
#include "act/supervise.h"
#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv {

/// The banner: the driver and GPUs (or the CPU-mode warning), each setting,
/// and the plan's warnings and errors.
std::vector<LogEvent> banner_events(const Machine& m, const Plan& plan);

LogEvent wrote_event(const std::string& path);
LogEvent write_failed_event(const std::string& path, const std::string& error);
LogEvent skipped_event(const std::string& path, const std::string& name);
LogEvent starting_event(const std::vector<std::string>& argv);
LogEvent exited_event(const ChildExit& e);
LogEvent error_event(const std::string& message);

}  // namespace gpuenv
