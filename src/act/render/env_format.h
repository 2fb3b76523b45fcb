// Rendering a Plan's settings for the shell, dotenv readers and JSON. No
// file can be both exact for docker's --env-file, which takes a value
// literally to the end of its line, and safe for a shell, which would run
// `;` and `$(...)` in it: the sh format is for shells, the dotenv format for
// dotenv readers only, and says so in its header.
#pragma once

#include <string>
#include <vector>

#include "model/plan.h"

namespace gpuenv {

enum class EnvFormat { kSh, kDotenv, kJson };

/// Parses "sh", "dotenv" or "json".
bool parse_env_format(const std::string& name, EnvFormat* out);

/// Quotes a value so that POSIX sh reads it back byte for byte, whatever it
/// contains (quotes, $, backticks, newlines): '...' with ' as '\''.
std::string sh_quote(const std::string& value);

/// True for a portable environment variable name: [A-Za-z_][A-Za-z0-9_]*.
bool valid_env_name(const std::string& name);

/// The first lines of every dotenv rendering: which readers it is for, and
/// what a shell should read instead.
extern const char kDotenvHeader[];

/// Whether a dotenv line can carry `value` exactly: not with a newline, CR
/// or NUL (they end or break the line), nor with bytes that are not UTF-8
/// (docker refuses the whole file).
bool dotenv_can_carry(const std::string& value);

/// Renders the settings. sh: `export NAME='value'` lines, every value
/// single-quoted, safe to eval or source. dotenv: kDotenvHeader, then
/// NAME=value lines, the value literal (docker run --env-file, compose
/// env_file, systemd EnvironmentFile, python-dotenv; docs/container.md says
/// where their rules differ); a setting it cannot carry is left out and its
/// name appended to *skipped (when given). json: one object. False, with
/// *err, for an invalid name, or a NUL in a value for sh.
bool format_env(const std::vector<Setting>& settings, EnvFormat format, std::string* out,
                std::string* err, std::vector<std::string>* skipped = nullptr);

}  // namespace gpuenv
