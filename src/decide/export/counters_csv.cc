#include "decide/export/counters_csv.h"

#include <algorithm>
#include <array>

namespace gpuenv {
namespace {

constexpr std::array<std::string_view, 5> kTypes = {"gauge", "counter", "histogram", "summary", "label"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 && c != '\t'; });
}

// One quoted field from `s` (at its opening quote) into *field; *end is
// just past the closing quote.
bool quoted_field(std::string_view s, std::string* field, std::size_t* end) {
  for (std::size_t i = 1; i < s.size(); ++i) {
    if (s[i] != '"') {
      field->push_back(s[i]);
    } else if (i + 1 < s.size() && s[i + 1] == '"') {
      field->push_back('"');
      ++i;
    } else {
      *end = i + 1;
      return true;
    }
  }
  return false;
}

// A line's comma-separated fields, trimmed; false with *why.
bool split_fields(std::string_view line, std::vector<std::string>* fields, std::string* why) {
  std::size_t at = 0;
  while (true) {
    std::size_t comma = line.find(',', at);
    std::string_view raw = line.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    std::string_view t = trim(raw);
    if (!t.empty() && t.front() == '"') {
      std::string field;
      std::size_t start = line.find('"', at), end = 0;
      if (!quoted_field(line.substr(start), &field, &end)) return *why = "a quoted field is not closed", false;
      std::size_t next = line.find_first_not_of(" \t", start + end);
      if (next != std::string_view::npos && line[next] != ',')
        return *why = "text after a quoted field's closing quote", false;
      fields->push_back(field);
      if (next == std::string_view::npos) return true;
      at = next + 1;
      continue;
    }
    if (t.find('"') != std::string_view::npos) return *why = "a quote inside an unquoted field", false;
    fields->emplace_back(t);
    if (comma == std::string_view::npos) return true;
    at = comma + 1;
  }
}

bool valid_field_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool parse_line(std::string_view line, int number, DcgmCounter* out, std::string* why) {
  if (has_control(line)) return *why = "a control character", false;
  std::vector<std::string> f;
  if (!split_fields(line, &f, why)) return false;
  if (f.size() != 3) return *why = std::to_string(f.size()) + " fields, want 3: FIELD, TYPE, HELP", false;
  if (!valid_field_name(f[0]))
    return *why = "the field name must be letters, digits and _ (DCGM_FI_DEV_GPU_TEMP)", false;
  if (std::find(kTypes.begin(), kTypes.end(), f[1]) == kTypes.end())
    return *why = "type \"" + f[1] + "\" is not gauge, counter, histogram, summary or label", false;
  *out = {f[0], f[1], f[2], number};
  return true;
}

}  // namespace

bool parse_dcgm_counters(std::string_view text, std::vector<DcgmCounter>* out, std::string* err) {
  std::vector<DcgmCounter> counters;
  int number = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t nl = text.find('\n', at);
    std::string_view line = text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    at = nl == std::string_view::npos ? text.size() : nl + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view t = trim(line);
    if (t.empty() || t.front() == '#') continue;
    DcgmCounter c;
    std::string why;
    if (!parse_line(t, number, &c, &why)) return *err = "line " + std::to_string(number) + ": " + why, false;
    counters.push_back(std::move(c));
  }
  *out = std::move(counters);
  return true;
}

}  // namespace gpuenv
