// doctor: sense everything doctor's checks read (cuInit, GPU health,
// libtorch_cuda's kernels), run the checks, print findings with fixes.
#include <exception>

#include "act/render/doctor_report.h"
#include "act/render/report.h"
#include "cli/context.h"
#include "cli/commands.h"
#include "model/exit_codes.h"
#include "diagnose/doctor.h"

namespace gpuenv {
namespace {

int exit_code(Status s, bool nagios) {
  switch (s) {
    case Status::kOk: return nagios ? kNagiosOk : int(kExitOk);
    case Status::kWarning: return nagios ? kNagiosWarning : int(kExitWarnings);
    case Status::kError: return nagios ? kNagiosCritical : int(kExitFailure);
  }
  return nagios ? kNagiosUnknown : int(kExitFailure);
}

struct Flags {
  bool json = false, list = false, extensions = false;
  std::string exit_codes = "default";
  bool nagios() const { return exit_codes == "nagios"; }
};

int run_doctor(Context* ctx, const Flags& f) {
  ctx->common.cuda = true;  // cuInit's result is a check of its own
  ctx->common.health = true;
  ctx->common.torch_kernels = true;
  ctx->common.ask_python = true;
  ctx->common.extensions = f.extensions;
  Machine m;
  if (!ctx->load_machine(&m)) return f.nagios() ? kNagiosUnknown : int(kExitBadInput);
  std::vector<Finding> findings = diagnose(m, ctx->plan_options(m));
  std::string out = format_report(DoctorReport{findings}, format_of(f.json), ctx->style(stdout));
  std::fputs(out.c_str(), stdout);
  return exit_code(worst(findings), f.nagios());
}

// Nagios mode: a failure of doctor itself is UNKNOWN (3), never an error of
// the node; main would turn it into 1, which reads as WARNING.
int run_guarded(Context* ctx, const Flags& f) {
  if (!f.nagios()) return run_doctor(ctx, f);
  try {
    return run_doctor(ctx, f);
  } catch (const std::exception& e) {
    log_message(Severity::kError, "internal error", std::string("doctor could not judge: ") + e.what());
  } catch (...) {
    log_message(Severity::kError, "internal error", "doctor could not judge: an unknown exception");
  }
  return kNagiosUnknown;
}

}  // namespace

std::function<int()> setup_doctor(CLI::App* sub, Context* ctx) {
  auto f = std::make_shared<Flags>();
  sub->add_flag("--json", f->json, "Findings as JSON");
  sub->add_flag("--extensions", f->extensions,
                "Also check every other CUDA library in torch's site-packages");
  sub->add_flag("--list", f->list, "List the checks and exit (--json: as JSON)");
  sub->add_option("--exit-codes", f->exit_codes,
                  "default, or nagios: 0 ok, 1 warning, 2 critical (an error), 3 unknown (doctor "
                  "could not judge)")
      ->check(CLI::IsMember({"default", "nagios"}))
      ->option_text("MODE");
  sub->footer(
      "Exit status: 0 all ok, 4 warnings only, 1 at least one error, 2 bad command line, 3 bad "
      "--machine file; with --exit-codes nagios: 0 ok, 1 warning, 2 critical, 3 unknown.");
  ctx->add_common_flags(sub, kFlagMachine | kFlagCacheRoot | kFlagPython | kFlagNoColor);
  return [ctx, f] {
    if (f->list) {
      std::fputs(format_report(CheckListReport{all_checks()}, format_of(f->json), ctx->style(stdout)).c_str(), stdout);
      return int(kExitOk);
    }
    return run_guarded(ctx, *f);
  };
}

}  // namespace gpuenv
