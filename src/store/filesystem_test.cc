#include "store/filesystem.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace gpuenv::store {
namespace {

TEST(StoreFilesystem, NetworkFilesystemsGetARollbackJournal) {
  const std::pair<unsigned long, const char*> rows[] = {
      {0x6969, "nfs"}, {0x0BD00BD0, "lustre"}, {0x47504653, "gpfs"}, {0x19830326, "beegfs"},
      {0xFF534D42, "cifs"}, {0xEF53, ""} /* ext4 */, {0x58465342, ""} /* xfs */, {0x01021994, ""} /* tmpfs */};
  for (const auto& [magic, name] : rows) {
    EXPECT_EQ(network_filesystem(magic), name) << std::hex << magic;
    EXPECT_STREQ(journal_mode_for(network_filesystem(magic)), *name ? "DELETE" : "WAL") << std::hex << magic;
  }
}

TEST(StoreFilesystem, TheTestSeamStandsInForStatfs) {
  setenv("GPUENV_STORE_FS_TYPE", "0x6969", 1);
  EXPECT_EQ(network_filesystem_of("/"), "nfs");
  setenv("GPUENV_STORE_FS_TYPE", "bogus", 1);
  EXPECT_EQ(network_filesystem_of("/"), "");
  unsetenv("GPUENV_STORE_FS_TYPE");
  EXPECT_EQ(network_filesystem_of("/nonexistent/dir"), "");
}

}  // namespace
}  // namespace gpuenv::store
