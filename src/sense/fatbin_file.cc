#include "sense/fatbin_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpuenv {
namespace {

std::string errno_text(const std::string& call, const std::string& path) {
  return call + "(" + path + "): " + std::strerror(errno);
}

}  // namespace

MappedFile::~MappedFile() {
  if (map_) munmap(map_, size_);
}

bool MappedFile::open(const std::string& path, std::string* err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = errno_text("open", path);
    return false;
  }
  bool ok = map(fd, path, err);
  close(fd);
  return ok;
}

bool MappedFile::map(int fd, const std::string& path, std::string* err) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *err = errno_text("fstat", path);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *err = path + ": not a regular file";
    return false;
  }
  if (st.st_size == 0) return true;
  void* map = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) {
    *err = errno_text("mmap", path);
    return false;
  }
  madvise(map, st.st_size, MADV_RANDOM);  // headers sit between large payloads: no read-ahead
  map_ = map;
  data_ = static_cast<const std::uint8_t*>(map);
  size_ = st.st_size;
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
