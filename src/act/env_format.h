// Rendering a Plan's settings for the shell, docker --env-file and JSON.
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

/// Renders the settings. sh: `export NAME='value'` lines, safe to eval.
/// dotenv: NAME=value lines for `docker run --env-file`, which takes values
/// literally and cannot hold a newline or NUL: such a setting fails the
/// whole rendering (returns false, *err names it). json: one object.
bool format_env(const std::vector<Setting>& settings, EnvFormat format, std::string* out,
                std::string* err);

}  // namespace gpuenv
