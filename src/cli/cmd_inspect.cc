// inspect: read each file's CUDA code (sense/fatbin/fatbin_file.h), judge it
// against every GPU of the Machine (decide/kernel_verdict.h), print the
// report and its exit status (act/render/inspect_report.h).
#include "cli/commands.h"

#include "act/render/inspect_report.h"
#include "act/render/report.h"
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
    std::fputs(format_report(InspectReport{reports, m}, format_of(*as_json), Style{}).c_str(), stdout);
    return inspect_exit_code(reports);
  };
}

}  // namespace gpuenv
