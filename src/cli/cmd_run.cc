#include "cli/cmd_run.h"

#include "flow/command_history.h"
#include "flow/run.h"
#include "store/store.h"

namespace gpuenv {

std::optional<std::string> RunFlags::tune_spec() const {
  if (!tune || tune->count() == 0) return std::nullopt;
  return tune_value;
}

void add_run_flags(CLI::App* sub, RunFlags* f) {
  sub->add_flag("--no-watch", f->no_watch, "Do not watch the job (also: GPUENV_WATCH=0); exec it instead");
  sub->add_flag("--no-tune", f->no_tune, "Run untuned, even when the command has a tuning profile");
  f->tune = sub->add_flag("--tune", f->tune_value,
                          "Apply the last verdict's DataLoader settings; --tune=-num_workers,... refuses some, "
                          "--tune=+precision adds bf16 autocast")
                ->option_text("[=-NAME,+NAME,...]");
  sub->add_option("--db", f->db, "The job store (default: gpuenv.db under the cache root)")->option_text("FILE");
}

int run_command(Context* ctx, const RunFlags& f, const std::function<void(const Plan&)>& warn) {
  flow::RunRequest r;
  r.argv = ctx->command;
  r.store = store::chosen_path(f.db, ctx->cache_root());
  r.tune = f.tune_spec();
  r.no_tune = f.no_tune;
  r.no_watch = f.no_watch;
  r.patience = ctx->store_patience;
  auto sense = [ctx](Machine* m, Options* o) {
    if (!ctx->load_machine(m)) return false;
    *o = ctx->plan_options(*m);
    return true;
  };
  return flow::run_job(r, flow::process_run_env(sense, warn));
}

Feedback read_feedback(Context* ctx, const RunFlags& f, const std::vector<std::string>& argv) {
  return flow::read_feedback(store::chosen_path(f.db, ctx->cache_root()), f.tune_spec(), argv, ctx->store_patience);
}

}  // namespace gpuenv
