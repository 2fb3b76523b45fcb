// The filesystem the store lives on, and the journal SQLite can safely use
// there: WAL needs memory shared by every process that opens the database
// (its -shm file is mmap()ed), which a network filesystem cannot give
// ("WAL does not work over a network filesystem", sqlite.org/wal.html). HPC
// home directories are NFS, Lustre, GPFS or BeeGFS, so there the store uses
// a rollback journal, which needs only the POSIX locks those filesystems
// provide. docs/bench.md, "The store on a shared filesystem".
#pragma once

#include <string>

namespace gpuenv::store {

/// "nfs", "lustre", ... for a network filesystem's statfs(2) f_type; "" for
/// any other (local) one.
std::string network_filesystem(unsigned long f_type);

/// The network filesystem `dir` is on, or "" (also when statfs fails).
/// GPUENV_STORE_FS_TYPE (a hex f_type, e.g. 0x6969 for NFS) stands in for
/// statfs, so the tests can fake a filesystem they cannot mount.
std::string network_filesystem_of(const std::string& dir);

/// The journal_mode PRAGMA value for a store on `network_fs` ("" = local).
const char* journal_mode_for(const std::string& network_fs);

}  // namespace gpuenv::store
