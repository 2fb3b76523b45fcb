#include "decide/torch_version.h"

#include <cctype>

namespace gpuenv {
namespace {

// Reads a run of digits at *pos into *out; false when there is none.
bool read_number(const std::string& s, size_t* pos, int* out) {
  size_t start = *pos;
  while (*pos < s.size() && std::isdigit(static_cast<unsigned char>(s[*pos])) && *pos - start < 6)
    ++*pos;
  if (*pos == start) return false;
  *out = std::stoi(s.substr(start, *pos - start));
  return true;
}

bool read_dot_number(const std::string& s, size_t* pos, int* out) {
  if (*pos >= s.size() || s[*pos] != '.') return false;
  size_t p = *pos + 1;
  if (!read_number(s, &p, out)) return false;
  *pos = p;
  return true;
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

bool TorchVersion::official_build() const {
  if (local.empty() || local == "cpu") return true;
  return local.size() > 2 && local.compare(0, 2, "cu") == 0 && all_digits(local.substr(2));
}

bool TorchVersion::nvidia_build() const {
  return local.rfind("nv", 0) == 0 || local.find(".nv") != std::string::npos;
}

std::string TorchVersion::release_version() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

int TorchVersion::compare_release(const TorchVersion& o) const {
  if (major != o.major) return major < o.major ? -1 : 1;
  if (minor != o.minor) return minor < o.minor ? -1 : 1;
  return 0;
}

std::optional<TorchVersion> parse_torch_version(const std::string& v) {
  TorchVersion t;
  size_t pos = 0;
  if (!read_number(v, &pos, &t.major) || !read_dot_number(v, &pos, &t.minor)) return std::nullopt;
  read_dot_number(v, &pos, &t.patch);
  size_t plus = v.find('+', pos);
  t.suffix = v.substr(pos, plus == std::string::npos ? std::string::npos : plus - pos);
  if (plus != std::string::npos) t.local = v.substr(plus + 1);
  return t;
}

}  // namespace gpuenv
