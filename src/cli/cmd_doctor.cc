// doctor: sense everything doctor's checks read (cuInit, GPU health,
// libtorch_cuda's kernels), run the checks, print findings with fixes.
#include "act/doctor_report.h"
#include "cli/context.h"
#include "cli/exit_codes.h"
#include "diagnose/doctor.h"

namespace gpuenv {
namespace {

std::string list_checks() {
  std::string out;
  for (const Check& c : all_checks()) out += std::string(c.name) + "\t" + c.summary + "\n";
  return out;
}

int exit_code(Status s) {
  switch (s) {
    case Status::kOk: return kExitOk;
    case Status::kWarning: return kExitWarnings;
    case Status::kError: return kExitFailure;
  }
  return kExitFailure;
}

}  // namespace

std::function<int()> setup_doctor(CLI::App* sub, Context* ctx) {
  struct Flags {
    bool json = false, list = false, extensions = false;
  };
  auto f = std::make_shared<Flags>();
  sub->add_flag("--json", f->json, "Findings as JSON");
  sub->add_flag("--extensions", f->extensions,
                "Also check every other CUDA library in torch's site-packages");
  sub->add_flag("--list", f->list, "List the checks and exit");
  sub->footer(
      "Exit status: 0 all ok, 4 warnings only, 1 at least one error, 2 bad command line, 3 bad "
      "--machine file.");
  ctx->add_common_flags(sub);
  return [ctx, f] {
    if (f->list) {
      std::fputs(list_checks().c_str(), stdout);
      return int(kExitOk);
    }
    ctx->common.cuda = true;  // cuInit's result is a check of its own
    ctx->common.health = true;
    ctx->common.torch_kernels = true;
    ctx->common.extensions = f->extensions;
    Machine m;
    if (!ctx->load_machine(&m)) return int(kExitBadInput);
    std::vector<Finding> findings = diagnose(m, ctx->plan_options(m));
    std::string out =
        f->json ? doctor_to_json(findings) : render_doctor(findings, ctx->style(stdout));
    std::fputs(out.c_str(), stdout);
    return exit_code(worst(findings));
  };
}

}  // namespace gpuenv
