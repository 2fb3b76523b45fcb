// serve jupyter, serve ssh: the services the image starts (docs/container.md).
// The sequences are flow/serve.h's; this file parses the flags into their
// options and hands them the real environment.

#include "cli/commands.h"
#include "cli/context.h"
#include "flow/serve.h"
#include "sys/env.h"

namespace gpuenv {
namespace {

// The real environment: the machine as sensed, decided as the service's user.
flow::ServeEnv serve_env(const Context* ctx) {
  flow::ServeEnv env;
  env.sense = [ctx](Machine* m, Options* o) {
    if (!ctx->load_machine(m)) return false;
    *o = ctx->plan_options(*m);
    return true;
  };
  return env;
}

std::function<int()> setup_jupyter(CLI::App* sub, Context* ctx) {
  auto o = std::make_shared<JupyterOptions>();
  sub->add_option("--port", o->port, "Port (default 8888)")
      ->check(CLI::Range(1, 65535))
      ->option_text("PORT");
  sub->add_option("--ip", o->ip, "Address to listen on (default 0.0.0.0)")->option_text("ADDR");
  sub->add_option("--root-dir", o->root_dir, "Notebook directory (default /workspace)")->option_text("DIR");
  sub->add_option("--user", o->user, "Run as this user (default $GPUENV_USER)")
      ->envname("GPUENV_USER")
      ->option_text("NAME");
  sub->add_option("--token-file", o->token_file,
                  "Token file (default ~USER/.local/share/gpuenv/jupyter_token)")
      ->option_text("FILE");
  sub->add_flag("--allow-root", o->allow_root, "Let Jupyter run as root (never the default)");
  ctx->add_common_flags(sub, kPlanFlags);
  return [ctx, o] {
    return flow::serve_jupyter(*o, serve_env(ctx));
  };
}

std::function<int()> setup_ssh(CLI::App* sub, Context* ctx) {
  auto o = std::make_shared<SshOptions>();
  o->etc_dir = env_or("GPUENV_ETC_DIR", o->etc_dir);
  sub->add_option("--port", o->port, "Port (default 22)")
      ->check(CLI::Range(1, 65535))
      ->option_text("PORT");
  sub->add_option("--ip", o->ip, "Address to listen on (default: every address)")
      ->option_text("ADDR");
  sub->add_option("--user", o->user, "The one user allowed in (default $GPUENV_USER)")
      ->envname("GPUENV_USER")
      ->option_text("NAME");
  sub->add_option("--host-key-dir", o->host_key_dir,
                  "Host keys, made on first start (default /etc/gpuenv/ssh as root)")
      ->option_text("DIR");
  sub->add_option("--run-dir", o->run_dir,
                  "sshd_config, authorized_keys, pid file (default /run/gpuenv/sshd as root)")
      ->option_text("DIR");
  sub->add_option("--authorized-keys", o->authorized_keys_file,
                  "Public keys allowed in (GPUENV_SSH_AUTHORIZED_KEYS adds more)")
      ->option_text("FILE");
  sub->add_flag("--allow-forwarding", o->allow_forwarding,
                "Allow ssh -L (local TCP forwarding), which remote editors such as VS Code need")
      ->envname("GPUENV_SSH_ALLOW_FORWARDING");
  sub->add_option("--sshd", o->sshd, "The sshd binary (default /usr/sbin/sshd)")->option_text("PATH");
  ctx->add_common_flags(sub, kPlanFlags);
  return [ctx, o] {
    return flow::serve_ssh(*o, serve_env(ctx));
  };
}

}  // namespace

std::function<int()> setup_serve(CLI::App* sub, Context* ctx) {
  sub->require_subcommand(1);
  CLI::App* jupyter_sub = sub->add_subcommand("jupyter", "JupyterLab as a non-root user, behind a token");
  CLI::App* ssh_sub = sub->add_subcommand("ssh", "sshd for one non-root user, key logins only");
  auto jupyter = setup_jupyter(jupyter_sub, ctx);
  auto ssh = setup_ssh(ssh_sub, ctx);
  return [jupyter_sub, jupyter, ssh] { return *jupyter_sub ? jupyter() : ssh(); };
}

}  // namespace gpuenv
