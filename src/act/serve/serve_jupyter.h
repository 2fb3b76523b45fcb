// `gpuenv serve jupyter`: JupyterLab (else Jupyter Server, else Notebook) in
// the foreground, as a non-root user, always behind a token.
//
// The token never appears on a command line (anyone can read
// /proc/PID/cmdline) nor in the server's environment (kernels and terminals
// inherit it, and `!env` in a shared notebook would show it). Jupyter reads
// it from the file named by JUPYTER_TOKEN_FILE: a 0600 file of the user's.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "act/log.h"
#include "act/serve/serve_common.h"
#include "model/plan.h"

namespace gpuenv {

struct JupyterOptions {
  int port = 8888;
  std::string ip = "0.0.0.0";
  std::string root_dir = "/workspace";
  std::string user;        // --user, else GPUENV_USER
  std::string token_file;  // "" = ~USER/.local/share/gpuenv/jupyter_token
  bool allow_root = false;
};

/// Where the token came from.
enum class TokenSource { kEnv, kFile, kGenerated };

/// The Jupyter programs tried, in order: JupyterLab, Jupyter Server,
/// Notebook (`jupyter lab` runs `jupyter-lab`, and so on).
const std::vector<std::string>& jupyter_programs();

/// The command line for `program` (a path ending in one of
/// jupyter_programs()). It carries no secret.
std::vector<std::string> jupyter_argv(const std::string& program, const JupyterOptions& o,
                                      bool as_root);

/// The URL to print: http://HOST:PORT/PATH, 127.0.0.1 for a wildcard ip.
std::string jupyter_url(const std::string& program, const JupyterOptions& o);

/// A new token: 128 bits from /dev/urandom as 32 hex digits.
bool generate_token(std::string* out, std::string* err);

/// The shortest token gpuenv accepts: 32 characters, 128 bits when random
/// (generate_token's are exactly that long). Anyone who reaches the port can
/// guess at a token, and Jupyter does not slow them down.
inline constexpr size_t kMinTokenChars = 32;

/// The most a token file may hold.
inline constexpr size_t kMaxTokenFileBytes = 4096;

/// True for a token Jupyter can take: printable ASCII without spaces.
bool valid_token(const std::string& token);

/// Checks a chosen token: valid_token and at least kMinTokenChars long.
/// `where` names its source in *err, which never holds the token itself.
bool check_token(const std::string& token, const std::string& where, std::string* err);

/// Makes `path` hold exactly the token, mode 0600: `env_token` when it is
/// not empty (GPUENV_JUPYTER_TOKEN, else JUPYTER_TOKEN), else the file's own
/// token (surrounding whitespace removed; the file read as open_regular
/// does, at most kMaxTokenFileBytes), else a new one created with O_EXCL.
/// A chosen token must pass check_token.
bool ensure_token_file(const std::string& path, const std::string& env_token, std::string* token,
                       TokenSource* source, std::string* err);

/// The token chosen in the environment: GPUENV_JUPYTER_TOKEN, else
/// Jupyter's own JUPYTER_TOKEN, read through `get`; "" when neither is set.
std::string jupyter_token_from_env(const std::function<const char*(const char*)>& get);

/// Says where Jupyter listens and where its token is, through `log`; a
/// generated token is shown, only this once, in lines of its own
/// (`log_event`, LogEvent::Form::kVerbatim).
void say_jupyter_url(const std::string& program, const JupyterOptions& o, const std::string& file,
                     const std::string& token, TokenSource source, const MessageSink& log,
                     const std::function<void(const LogEvent&)>& log_event);

/// As root: becomes `a` for good (drop_privileges), unless it is root
/// itself (allowed explicitly); not root: nothing to do.
bool become_service_user(const Account& a, std::string* err);

/// Whether the notebook directory can be read and searched (*err names it).
bool check_root_dir(const std::string& dir, std::string* err);

// The sequence that starts Jupyter is flow/serve.h's.

}  // namespace gpuenv
