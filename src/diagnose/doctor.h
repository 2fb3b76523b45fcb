// Doctor: every check is a pure function (Machine, Options) -> Findings,
// registered in one table (doctor.cc). A check returns nothing when it does
// not apply, an ok finding when it verified something, and a warning or an
// error with the fix otherwise. docs/doctor.md lists them with sources.
#pragma once

#include <string>
#include <vector>

#include <initializer_list>

#include "decide/health.h"
#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv {

enum class Status { kOk, kWarning, kError };

/// "ok", "warning", "error".
const char* status_name(Status s);

struct Finding {
  std::string check;  // the registry name, e.g. "cuda_init"
  Status status = Status::kOk;
  std::string seen;  // what was seen, one or two sentences
  std::string fix;   // a command or a setting; empty when ok
  friend bool operator==(const Finding&, const Finding&) = default;
};

Finding ok(std::string seen);
Finding warning(std::string seen, std::string fix);
Finding error(std::string seen, std::string fix);

using CheckFn = std::vector<Finding> (*)(const Machine&, const Options&);

struct Check {
  const char* name;
  const char* summary;  // one line for `gpuenv doctor --list`
  CheckFn fn;
};

/// Every check, in the order doctor runs and prints them.
const std::vector<Check>& all_checks();

/// Runs every check; each finding carries its check's name.
std::vector<Finding> diagnose(const Machine& m, const Options& o);

/// The worst status among `findings` (kOk for none).
Status worst(const std::vector<Finding>& findings);

// The checks, grouped by file.
// check_driver.cc
std::vector<Finding> check_nvml(const Machine&, const Options&);
std::vector<Finding> check_device_nodes(const Machine&, const Options&);
std::vector<Finding> check_cuda_init(const Machine&, const Options&);
std::vector<Finding> check_container(const Machine&, const Options&);
std::vector<Finding> check_visible_devices(const Machine&, const Options&);
std::vector<Finding> check_profiling(const Machine&, const Options&);
// check_torch.cc
std::vector<Finding> check_torch(const Machine&, const Options&);
std::vector<Finding> check_driver_compat(const Machine&, const Options&);
std::vector<Finding> check_kernels(const Machine&, const Options&);
std::vector<Finding> check_extensions(const Machine&, const Options&);
// check_host.cc
std::vector<Finding> check_shm(const Machine&, const Options&);
std::vector<Finding> check_memlock(const Machine&, const Options&);
std::vector<Finding> check_bytecode(const Machine&, const Options&);
// check_health.cc
/// decide/health.h's findings for every GPU, as doctor findings.
std::vector<Finding> health_findings(const Machine& m, std::initializer_list<HealthFn> fns);
std::vector<Finding> check_persistence(const Machine&, const Options&);
std::vector<Finding> check_compute_mode(const Machine&, const Options&);
std::vector<Finding> check_memory_in_use(const Machine&, const Options&);
std::vector<Finding> check_memory_errors(const Machine&, const Options&);
std::vector<Finding> check_clocks(const Machine&, const Options&);
std::vector<Finding> check_pcie(const Machine&, const Options&);
// check_multigpu.cc
std::vector<Finding> check_p2p(const Machine&, const Options&);
std::vector<Finding> check_fabric(const Machine&, const Options&);
std::vector<Finding> check_local_rank(const Machine&, const Options&);

}  // namespace gpuenv
