// What every subcommand shares: the common flags and the steps from them to
// a Machine, Options and a Plan. Commands live in cli/cmd_*.cc and are
// listed in cli/commands.h.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "act/log.h"
#include "act/render/machine_report.h"
#include "model/machine.h"
#include "model/plan.h"
#include "sense/sense.h"
#include "store/store.h"
#include "sys/env.h"  // env_or

namespace gpuenv {

/// The common flags, one bit each, declared once (Context::add_common_flags):
/// a command adds exactly those it reads, and any other is refused as a bad
/// command line (exit 2). README's flag table says which command takes
/// which; tests/flags_readme_test.cc holds it to each command's --help.
enum CommonFlag : unsigned {
  kFlagMachine = 1u << 0,    // --machine FILE
  kFlagCuda = 1u << 1,       // --cuda
  kFlagOverride = 1u << 2,   // --override
  kFlagPtx = 1u << 3,        // --ptx
  kFlagCacheRoot = 1u << 4,  // --cache-root DIR
  kFlagNoColor = 1u << 5,    // --no-color
  kFlagPython = 1u << 6,     // --python PATH
};
/// What a command that senses this machine reads.
inline constexpr unsigned kSensingFlags = kFlagMachine | kFlagCuda | kFlagCacheRoot | kFlagPython;
/// What a command that makes a plan reads.
inline constexpr unsigned kPlanFlags = kSensingFlags | kFlagOverride | kFlagPtx;
/// Every common flag: for listing them (the README test), never a command's set.
inline constexpr unsigned kEveryCommonFlag = kPlanFlags | kFlagNoColor;

/// The common flags' values.
struct Common {
  std::string machine_file;  // --machine
  bool cuda = false;         // --cuda
  bool override_user = false;
  bool ptx = false;
  std::string cache_root;
  bool no_color = false;
  std::string python;  // --python
  std::string log_format;  // --log-format, every command (cli/app.cc)
  // Set by doctor, not flags every command has: what else to sense.
  bool health = false;
  bool details = false;
  bool torch_kernels = false;
  bool ask_python = false;
  bool extensions = false;
};

class Context {
 public:
  Common common;
  /// For commands that run a program (run, init): everything after their
  /// own flags, or after `--`, verbatim.
  std::vector<std::string> command;

  /// Adds the common flags named in `which` (CommonFlag bits) to a
  /// subcommand: only those it reads (--no-color only where it prints
  /// colour). --log-format is every command's: cli/app.cc adds it.
  void add_common_flags(CLI::App* sub, unsigned which);
  /// How long this command waits, in all its reads, for a store another
  /// process holds (store::kStorePatience): sensing's measurements, run's
  /// last verdict and tuning profile, explain's feedback. Once one found it
  /// locked, the others leave it alone.
  store::Patience store_patience;

  /// The Machine: sensed live, or read from --machine FILE. On failure
  /// prints the reason and returns false (exit with kExitBadInput).
  bool load_machine(Machine* m) const;
  /// The same without the store's measurements (init senses the hardware
  /// under a time limit, then reads the store: read_measurements()).
  bool load_machine_without_store(Machine* m) const;
  /// A live Machine's (none with --machine) measurements from the store at
  /// `path`, said on stderr when the store is locked (sense/measurements.h).
  void read_measurements(const std::string& path, Machine* m) const;
  SenseOptions sense_options() const;
  /// The snapshot's recorded variables with the live process's on top.
  Options plan_options(const Machine& m) const;
  /// The cache root, resolve_cache_root() of --cache-root (store/cache_root.h).
  std::string cache_root() const;
  Style style(FILE* stream) const;
};

}  // namespace gpuenv
