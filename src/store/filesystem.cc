#include "store/filesystem.h"

#include <sys/vfs.h>

#include <cstdlib>

namespace gpuenv::store {
namespace {

// statfs(2)'s magic numbers (linux/magic.h, and each filesystem's source).
struct Magic {
  unsigned long f_type;
  const char* name;
};
constexpr Magic kNetwork[] = {
    {0x6969, "nfs"},        {0x0BD00BD0, "lustre"}, {0xFF534D42, "cifs"},   {0xFE534D42, "smb2"},
    {0x517B, "smb"},        {0x47504653, "gpfs"},   {0x19830326, "beegfs"}, {0x00C36400, "ceph"},
    {0x01021997, "9p"},     {0x013111A8, "ibrix"},  {0x6B414653, "afs"},    {0x5346414F, "openafs"},
    {0xAAD7AAEA, "panfs"},  {0x0BEEFDAD, "wekafs"},
};

}  // namespace

std::string network_filesystem(unsigned long f_type) {
  for (const auto& m : kNetwork)
    if (m.f_type == (f_type & 0xFFFFFFFFul)) return m.name;
  return "";
}

std::string network_filesystem_of(const std::string& dir) {
  if (const char* fake = std::getenv("GPUENV_STORE_FS_TYPE"); fake && *fake) {
    char* end = nullptr;
    unsigned long v = std::strtoul(fake, &end, 16);
    return end && *end == '\0' ? network_filesystem(v) : "";
  }
  struct statfs s {};
  if (statfs(dir.c_str(), &s) != 0) return "";
  return network_filesystem(static_cast<unsigned long>(s.f_type));
}

const char* journal_mode_for(const std::string& network_fs) { return network_fs.empty() ? "WAL" : "DELETE"; }

}  // namespace gpuenv::store
