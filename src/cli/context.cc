#include "cli/context.h"

#include <algorithm>
#include <cstdlib>

#include "model/env_names.h"
#include "model/snapshot.h"
#include "sys/fs.h"
#include "sys/terminal.h"
#include "sense/measurements.h"
#include "sense/python/python_hook.h"
#include "store/cache_root.h"
#include "store/private_dir.h"
#include "store/store.h"

namespace gpuenv {

void Context::add_common_flags(CLI::App* sub, unsigned which) {
  Common* c = &common;
  if (which & kFlagMachine)
    sub->add_option("--machine", c->machine_file,
                    "Work from a snapshot (gpuenv detect --json) instead of this machine")
        ->option_text("FILE");
  if (which & kFlagCuda) sub->add_flag("--cuda", c->cuda, "Also query the CUDA driver (cuInit: slower)");
  if (which & kFlagOverride) sub->add_flag("--override", c->override_user, "Replace variables you already set");
  if (which & kFlagPtx) sub->add_flag("--ptx", c->ptx, "Add +PTX to TORCH_CUDA_ARCH_LIST");
  if (which & kFlagCacheRoot)
    sub->add_option("--cache-root", c->cache_root,
                    "Where compile caches, bytecode and the measurement store live (default: $GPUENV_CACHE_ROOT, $XDG_CACHE_HOME/gpuenv, ~/.cache/gpuenv)")
        ->option_text("DIR");
  if (which & kFlagNoColor) sub->add_flag("--no-color", c->no_color, "No ANSI colour (also: NO_COLOR)");
  if (which & kFlagPython)
    sub->add_option("--python", c->python,
                    "The Python whose torch to read (default: $VIRTUAL_ENV, $CONDA_PREFIX, "
                    "python3 on PATH)")
        ->option_text("PATH");
}

Style Context::style(FILE* stream) const { return {!common.no_color && color_wanted(stream)}; }

SenseOptions Context::sense_options() const {
  SenseOptions o;
  o.with_cuda = common.cuda;
  o.python = common.python;
  o.with_health = common.health;
  o.with_details = common.details || common.health;
  o.with_torch_kernels = common.torch_kernels;
  o.ask_python = common.ask_python;
  o.with_extensions = common.extensions;
  o.nvml_library = env_or("GPUENV_NVML_LIBRARY", o.nvml_library);
  o.cuda_library = env_or("GPUENV_CUDA_LIBRARY", o.cuda_library);
  o.dcgm_library = env_or("GPUENV_DCGM_LIBRARY", o.dcgm_library);
  o.store_path = store::path_in(cache_root());
  o.store_patience = store_patience;
  if (std::string exe = fs::executable_path(); !exe.empty())
    o.base_image_env_file = fs::normalize(fs::join(fs::dirname(exe), "../lib/gpuenv/base-image.env"));
  return o;
}

namespace {

// A store locked while sensing is this command's to say, once, and not the
// machine's: it stays out of the snapshot.
void say_store_locked(Machine* m) {
  auto& problems = m->host.problems;
  for (const auto& p : problems)
    if (p.code == kStoreLocked)
      log_message(Severity::kWarning, "store", p.message, {{"code", p.code}, {"fix", p.fix}});
  std::erase_if(problems, [](const Problem& p) { return p.code == kStoreLocked; });
}

bool sense_live(const SenseOptions& o, Machine* m) {
  std::string why;
  *m = sense_machine(o, &why);
  if (why.empty()) return true;
  log_message(Severity::kError, "python", why + "; name a Python interpreter: --python /path/to/venv/bin/python",
              {{"error", why}});
  return false;
}

bool load_snapshot(const std::string& file, Machine* m) {
  std::string text, err;
  if (!fs::read_file(file, &text, &err)) {
    log_message(Severity::kError, "snapshot",
                "cannot read the snapshot: " + err + "; pass a snapshot written by `gpuenv detect --json > FILE`",
                {{"path", file}, {"error", err}});
    return false;
  }
  if (!machine_from_json(text, m, &err)) {
    log_message(Severity::kError, "snapshot", file + ": " + err, {{"path", file}, {"error", err}});
    return false;
  }
  return true;
}

}  // namespace

bool Context::load_machine(Machine* m) const {
  if (!common.machine_file.empty()) return load_snapshot(common.machine_file, m);
  bool ok = sense_live(sense_options(), m);
  say_store_locked(m);
  return ok;
}

bool Context::load_machine_without_store(Machine* m) const {
  if (!common.machine_file.empty()) return load_snapshot(common.machine_file, m);
  SenseOptions o = sense_options();
  o.store_path.clear();
  return sense_live(o, m);
}

void Context::read_measurements(const std::string& path, Machine* m) const {
  if (!common.machine_file.empty()) return;
  sense_measurements(path, m, store_patience);
  say_store_locked(m);
}

std::string Context::cache_root() const { return resolve_cache_root(common.cache_root, std::getenv); }

Options Context::plan_options(const Machine& m) const {
  Options o;
  o.ptx = common.ptx;
  o.override_user = common.override_user;
  o.cache_root = cache_root();
  PythonHook hook = python_hook();
  o.python_hook_dir = hook.dir;
  o.python_hook_refused = hook.refused;
  if (std::string why = store::unsafe_dir(o.cache_root); !why.empty()) {
    o.cache_root_refused = why;
    o.cache_root.clear();
  }
  o.env = m.env;
  for (const auto& [name, value] : m.env) o.from_snapshot.insert(name);
  for (const auto& name : steering_env_names())
    if (const char* v = std::getenv(name.c_str())) {
      o.env[name] = v;
      o.from_snapshot.erase(name);
    }
  return o;
}

}  // namespace gpuenv
