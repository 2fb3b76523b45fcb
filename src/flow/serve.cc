#include "flow/serve.h"

#include "decide/decide.h"
#include "model/exit_codes.h"

namespace gpuenv::flow {
namespace {

// Says why the service does not start and returns `code`.
int refuse(const ServeEnv& env, const std::string& err, int code) {
  if (!err.empty()) env.log(Severity::kError, "error", err, nlohmann::ordered_json::object());
  return code;
}

// The plan, decided when the service asks: after it has become its user.
int make_plan(const ServeEnv& env, Plan* plan) {
  Machine m;
  Options o;
  if (!env.sense(&m, &o)) return kExitBadInput;
  *plan = decide(m, o);
  return kExitOk;
}

std::string token_file(const JupyterOptions& o, const Account& a) {
  return o.token_file.empty() ? a.home + "/.local/share/gpuenv/jupyter_token" : o.token_file;
}

// The plan and the token file in Jupyter's environment; no token in it.
void jupyter_env(const ServeEnv& env, const Plan& plan, const std::string& file) {
  for (const Setting& s : plan.settings) env.setenv(s.name, s.value);
  env.setenv("JUPYTER_TOKEN_FILE", file);
  env.unsetenv("JUPYTER_TOKEN");
  env.unsetenv("GPUENV_JUPYTER_TOKEN");
}

void say_sshd(const ServeEnv& env, const SshOptions& o, const Account& a, const KeyLines& keys) {
  env.log(Severity::kInfo, "sshd",
          "sshd on port " + std::to_string(o.port) + " for " + a.name + " (" + std::to_string(keys.keys) +
              " authorized keys): ssh -p " + std::to_string(o.port) + " " + a.name + "@HOST",
          {{"port", o.port}, {"user", a.name}, {"authorized_keys", keys.keys}});
}

}  // namespace

int serve_jupyter(const JupyterOptions& o, const ServeEnv& env) {
  Account account;
  std::string err;
  if (!env.account(o.user, o.allow_root, &account, &err))
    return refuse(env,
                  "refusing to start Jupyter: " + err +
                      (env.euid() == 0 ? " (Jupyter runs as root only with --allow-root)" : ""),
                  kExitServeConfig);
  std::string program = env.find_program(jupyter_programs());
  if (program.empty())
    return refuse(env,
                  "no Jupyter found on PATH (jupyter-lab, jupyter-server or jupyter-notebook): "
                  "pip install jupyterlab, or apt-get install jupyter-server",
                  kExitCommandNotFound);
  std::string given = jupyter_token_from_env(env.getenv);
  if (!env.become(account, &err) || !check_root_dir(o.root_dir, &err)) return refuse(env, err, kExitServeConfig);
  Plan plan;
  if (int code = make_plan(env, &plan)) return code;
  std::string file = token_file(o, account), token;
  TokenSource source;
  if (!ensure_token_file(file, given, &token, &source, &err)) return refuse(env, err, kExitServeConfig);
  jupyter_env(env, plan, file);
  say_jupyter_url(program, o, file, token, source, env.log, env.log_event);
  int code = env.exec(jupyter_argv(program, o, account.uid == 0), &err);
  return refuse(env, err, code);
}

int serve_ssh(const SshOptions& o, const ServeEnv& env) {
  Account a;
  KeyLines keys;
  std::string err;
  if (!env.account(o.user, false, &a, &err) || !check_not_locked(a, &err) || !gather_keys(o, env.getenv, &keys, &err))
    return refuse(env, "refusing to start sshd: " + err, kExitServeConfig);
  if (!check_sshd(o.sshd, &err)) return refuse(env, err, kExitCommandNotFound);
  if (a.uid != env.euid()) env.use_account_env(a);  // the plan is for the user's sessions
  Plan plan;
  if (int code = make_plan(env, &plan)) return code;
  std::string config;
  if (int code = env.install_sshd(o, a, keys, plan, &config, &err)) return refuse(env, err, code);
  say_sshd(env, o, a, keys);
  int code = env.exec({o.sshd, "-D", "-e", "-f", config}, &err);
  return refuse(env, err, code);
}

}  // namespace gpuenv::flow
