#include "act/export_files.h"

#include <algorithm>

#include "sys/fs.h"

namespace gpuenv {
namespace {

constexpr std::size_t kMaxFileBytes = 1 << 20;

}  // namespace

bool load_dcgm_counters(const std::string& path, std::vector<DcgmCounter>* out, std::string* err) {
  std::string text, why;
  if (!fs::read_head(path, kMaxFileBytes + 1, &text, &why)) return *err = "-f " + path + ": " + why, false;
  if (text.size() > kMaxFileBytes) return *err = "-f " + path + ": larger than 1 MiB; is it a counters CSV?", false;
  if (!parse_dcgm_counters(text, out, &why))
    return *err = "-f " + path + ": " + why + " (dcgm-exporter's counters CSV: `FIELD, TYPE, HELP` a line, # comments)",
           false;
  return true;
}

bool load_web_config(const std::string& path, WebConfig* out, std::string* err) {
  const std::string prefix = "--web-config-file " + path + ": ";
  std::string text, why;
  if (!fs::read_head(path, kMaxFileBytes + 1, &text, &why)) return *err = prefix + why, false;
  if (text.size() > kMaxFileBytes) return *err = prefix + "larger than 1 MiB", false;
  std::size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, std::max<std::size_t>(slash, 1));
  if (!parse_web_config(text, dir, out, &why)) return *err = prefix + why, false;
  return true;
}

}  // namespace gpuenv
