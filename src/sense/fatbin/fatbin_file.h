// Reads the CUDA code in a file on disk: the file is mapped read-only and
// only the headers the fatbin parser asks for are touched, so a 456 MB
// library costs a few thousand page faults, not a 456 MB read.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "sense/fatbin/fatbin_parse.h"

namespace gpuenv {

/// A file mapped read-only (MAP_PRIVATE); unmapped when destroyed.
class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  /// Maps `path`, opened by fs::open_regular. False and *err ("open(PATH):
  /// No such file or directory", "PATH: not a regular file (a FIFO)").
  bool open(const std::string& path, std::string* err);
  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }

 private:
  bool map(int fd, std::uint64_t size, const std::string& path, std::string* err);
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  void* map_ = nullptr;
};

/// Parses the CUDA code in `path` (parse_cuda_binary over the mapped file).
/// False and *err naming the file: "PATH: offset 0x40: ..." or
/// "open(PATH): Permission denied".
bool read_fatbin_file(const std::string& path, FatbinFile* out, std::string* err);

}  // namespace gpuenv
