#include "sense/fatbin/fatbin_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include "sys/fs.h"

namespace gpuenv {

MappedFile::~MappedFile() {
  if (map_) munmap(map_, size_);
}

bool MappedFile::open(const std::string& path, std::string* err) {
  std::uint64_t size = 0;
  int fd = fs::open_regular(path, err, &size);
  if (fd < 0) return false;
  bool ok = map(fd, size, path, err);
  close(fd);
  return ok;
}

bool MappedFile::map(int fd, std::uint64_t size, const std::string& path, std::string* err) {
  if (size == 0) return true;
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) {
    *err = fs::errno_text("mmap", path);
    return false;
  }
  madvise(map, size, MADV_RANDOM);  // headers sit between large payloads: no read-ahead
  map_ = map;
  data_ = static_cast<const std::uint8_t*>(map);
  size_ = size;
  return true;
}

bool read_fatbin_file(const std::string& path, FatbinFile* out, std::string* err) {
  MappedFile file;
  if (!file.open(path, err)) return false;
  std::string why;
  if (parse_cuda_binary(ByteReader(file.bytes()), out, &why)) return true;
  *err = path + ": " + why;
  return false;
}

}  // namespace gpuenv
