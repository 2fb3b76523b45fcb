#include "act/render/env_format.h"

#include <nlohmann/json.hpp>

#include "act/render/printable.h"
#include "model/json_text.h"

namespace gpuenv {

bool parse_env_format(const std::string& name, EnvFormat* out) {
  if (name == "sh") *out = EnvFormat::kSh;
  else if (name == "dotenv") *out = EnvFormat::kDotenv;
  else if (name == "json") *out = EnvFormat::kJson;
  else return false;
  return true;
}

std::string sh_quote(const std::string& value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

bool valid_env_name(const std::string& name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}

const char kDotenvHeader[] =
    "# For dotenv readers only (docker --env-file, compose env_file, systemd EnvironmentFile,\n"
    "# python-dotenv): each value is literal to the end of its line. Do not source it from a\n"
    "# shell, which would run parts of some values; shells read /etc/profile.d/gpuenv.sh or\n"
    "# eval \"$(gpuenv env)\".\n";

bool dotenv_can_carry(const std::string& value) {
  if (value.find_first_of(std::string("\n\r\0", 3)) != std::string::npos) return false;
  return valid_utf8(value);
}

namespace {

bool check_name(const Setting& s, std::string* err) {
  if (valid_env_name(s.name)) return true;
  *err = "setting name \"" + s.name + "\" is not a valid environment variable name";
  return false;
}

bool render_sh(const std::vector<Setting>& settings, std::string* out, std::string* err) {
  for (const auto& s : settings) {
    if (!check_name(s, err)) return false;
    if (s.value.find('\0') != std::string::npos) {
      *err = s.name + ": the value holds a NUL byte, which no environment variable can carry";
      return false;
    }
    *out += "export " + s.name + "=" + sh_quote(s.value) + "\n";
  }
  return true;
}

bool render_dotenv(const std::vector<Setting>& settings, std::string* out, std::string* err,
                   std::vector<std::string>* skipped) {
  *out += kDotenvHeader;
  for (const auto& s : settings) {
    if (!check_name(s, err)) return false;
    if (dotenv_can_carry(s.value)) *out += s.name + "=" + s.value + "\n";
    else if (skipped) skipped->push_back(s.name);
  }
  return true;
}

void render_json(const std::vector<Setting>& settings, std::string* out) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& s : settings) j[s.name] = s.value;
  *out += json_document(j);
}

}  // namespace

bool format_env(const std::vector<Setting>& settings, EnvFormat format, std::string* out,
                std::string* err, std::vector<std::string>* skipped) {
  out->clear();
  switch (format) {
    case EnvFormat::kSh: return render_sh(settings, out, err);
    case EnvFormat::kDotenv: return render_dotenv(settings, out, err, skipped);
    case EnvFormat::kJson:
      for (const auto& s : settings)
        if (!check_name(s, err)) return false;
      render_json(settings, out);
      return true;
  }
  return false;
}

}  // namespace gpuenv
