// inspect: read each file's CUDA code (sense/fatbin/fatbin_file.h), judge it
// against every GPU of the Machine (decide/kernel_verdict.h), print the
// report (act/render/inspect_report.h) and choose the exit status.
#include "cli/commands.h"

#include "act/render/inspect_report.h"
#include "model/exit_codes.h"
#include "decide/kernel_verdict.h"
#include "sense/fatbin/fatbin_file.h"

namespace gpuenv {
namespace {

InspectedFile inspect_file(const std::string& path, const Machine& m) {
  InspectedFile r;
  r.path = path;
  if (read_fatbin_file(path, &r.fatbin, &r.error)) r.verdict = judge_binary(r.fatbin, m);
  return r;
}

// 3 takes precedence over 1, and 1 over 4 (docs/inspect.md).
int exit_code(const std::vector<InspectedFile>& reports) {
  bool bad = false, cannot = false, jit = false;
  for (const auto& r : reports) {
    bad |= !r.error.empty();
    std::optional<KernelVerdict> worst = worst_verdict(r.verdict);
    cannot |= worst == KernelVerdict::kCannotRun;
    jit |= worst == KernelVerdict::kPtxJit;
  }
  if (bad) return kExitBadInput;
  return cannot ? kExitFailure : jit ? kExitInspectPtxJit : kExitOk;
}

std::string render_json(const std::vector<InspectedFile>& reports) {
  return inspect_to_json(reports, exit_code(reports));
}

std::string render_text(const std::vector<InspectedFile>& reports, const Machine& m) {
  return render_inspect(reports, m);
}

}  // namespace

std::function<int()> setup_inspect(CLI::App* sub, Context* ctx) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto as_json = std::make_shared<bool>(false);
  sub->add_option("files", *files, "ELF files (libraries, executables, objects) or raw fatbins")
      ->required()
      ->option_text("FILE...");
  sub->add_flag("--json", *as_json, "The report as JSON");
  ctx->add_common_flags(sub, kFlagMachine | kFlagCuda);
  return [ctx, files, as_json] {
    Machine m;
    if (!ctx->load_machine(&m)) return int(kExitBadInput);
    std::vector<InspectedFile> reports;
    for (const auto& f : *files) reports.push_back(inspect_file(f, m));
    for (const auto& r : reports)
      if (!r.error.empty()) log_message(Severity::kError, "file", r.error, {{"path", r.path}});
    std::string out = *as_json ? render_json(reports) : render_text(reports, m);
    std::fputs(out.c_str(), stdout);
    return exit_code(reports);
  };
}

}  // namespace gpuenv
