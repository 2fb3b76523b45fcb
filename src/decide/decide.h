// decide: Machine + Options -> Plan. Pure: no I/O, no clock, no getenv.
#pragma once

#include "model/machine.h"
#include "model/plan.h"

namespace gpuenv {

/// Runs every rule, merges their decisions in order (a later setting of the
/// same name replaces an earlier one), then honours what the user already
/// set: such a variable is kept (Origin::kKept) unless options.override_user.
Plan decide(const Machine& m, const Options& options);

}  // namespace gpuenv
