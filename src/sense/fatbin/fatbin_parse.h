// The CUDA code a binary carries, read without NVIDIA's tools: ELF64 section
// headers -> the .nv_fatbin and __nv_relfatbin sections -> fatbin containers
// -> entry headers, into the FatbinFile of model/fatbin.h. Pure: it parses
// bytes it is given, reads headers only and copies no payload. Every read goes through ByteReader, so hostile input
// gets an error naming the offset, never an out-of-bounds read.
// The layout, and how it was checked, is in docs/inspect.md.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/fatbin.h"

namespace gpuenv {

/// A bounds-checked little-endian reader over bytes it does not own. All
/// offsets are relative to its first byte; `base` is where that byte sits
/// in the file, for messages.
class ByteReader {
 public:
  ByteReader() = default;
  explicit ByteReader(std::span<const std::uint8_t> bytes, std::uint64_t base = 0)
      : bytes_(bytes), base_(base) {}

  std::uint64_t size() const { return bytes_.size(); }
  std::uint64_t base() const { return base_; }
  /// Whether [offset, offset + length) lies inside, without overflow.
  bool contains(std::uint64_t offset, std::uint64_t length) const {
    return offset <= size() && length <= size() - offset;
  }
  bool u8(std::uint64_t offset, std::uint8_t* out) const { return read(offset, 1, out); }
  bool u16(std::uint64_t offset, std::uint16_t* out) const { return read(offset, 2, out); }
  bool u32(std::uint64_t offset, std::uint32_t* out) const { return read(offset, 4, out); }
  bool u64(std::uint64_t offset, std::uint64_t* out) const { return read(offset, 8, out); }
  /// The bytes [offset, offset + length) as a reader of their own.
  bool slice(std::uint64_t offset, std::uint64_t length, ByteReader* out) const;
  /// The NUL-terminated string at `offset`; false when no NUL comes before
  /// the end, or within `max` bytes (the scan stops there: a name table
  /// without NULs costs each lookup `max` bytes, not the table's size).
  bool cstring(std::uint64_t offset, std::string_view* out, std::uint64_t max = ~0ull) const;

 private:
  template <typename T>
  bool read(std::uint64_t offset, int n, T* out) const {
    if (!contains(offset, n)) return false;
    T v = 0;
    for (int i = n - 1; i >= 0; --i) v = T(v << 8 | bytes_[offset + i]);
    *out = v;
    return true;
  }
  std::span<const std::uint8_t> bytes_;
  std::uint64_t base_ = 0;
};

/// Parses the fatbin containers that fill `region` back to back (zero
/// padding between them is skipped), appending to `out`. False and *err
/// ("offset 0x...: what is wrong") on malformed input.
bool parse_fatbin_region(const ByteReader& region, bool relocatable, FatbinFile* out,
                         std::string* err);

/// Parses a whole file: an ELF64 little-endian file (its .nv_fatbin and
/// __nv_relfatbin sections; an ELF without them holds no CUDA code and is
/// not an error) or a raw fatbin (it starts with the fatbin magic). False
/// and *err on anything else or on malformed input; the message names the
/// offset, not the file (the caller adds that).
bool parse_cuda_binary(const ByteReader& file, FatbinFile* out, std::string* err);

}  // namespace gpuenv
