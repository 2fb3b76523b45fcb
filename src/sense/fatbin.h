// The CUDA code a binary carries, read without NVIDIA's tools: ELF64 section
// headers -> the .nv_fatbin and __nv_relfatbin sections -> fatbin containers
// -> entry headers. Pure: it parses bytes it is given, reads headers only and
// copies no payload. Every read goes through ByteReader, so hostile input
// gets an error naming the offset, never an out-of-bounds read.
// The layout, and how it was checked, is in docs/inspect.md.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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

/// Entry kinds (entry header offset 0).
inline constexpr std::uint16_t kFatbinKindPtx = 1;
inline constexpr std::uint16_t kFatbinKindCubin = 2;
inline constexpr std::uint16_t kFatbinKindLtoIr = 8;  // -gencode code=lto_XY

/// Entry header flags (offset 40).
inline constexpr std::uint64_t kFatbinFlag64Bit = 0x1;
inline constexpr std::uint64_t kFatbinFlagDebug = 0x2;
inline constexpr std::uint64_t kFatbinFlagLinux = 0x10;
inline constexpr std::uint64_t kFatbinFlagCompressedOld = 0x1000;
inline constexpr std::uint64_t kFatbinFlagCompressedLz4 = 0x2000;
inline constexpr std::uint64_t kFatbinFlagCompressedZstd = 0x8000;
inline constexpr std::uint64_t kFatbinFlagArchSpecific = 0x100000;  // sm_90a
inline constexpr std::uint64_t kFatbinFlagFamily = 0x200000;        // sm_100f

inline constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
inline constexpr std::uint16_t kElfMachineCuda = 190;  // EM_CUDA: a cubin itself
inline constexpr std::uint64_t kFatbinEntryHeaderMin = 64;

/// One entry: a cubin, a PTX text or an LTO-IR module, as its header says.
struct FatbinEntry {
  std::uint64_t offset = 0;  // of the entry header, in the file
  std::uint16_t kind = 0;    // kFatbinKind*, or a kind gpuenv does not know
  int arch = 0;              // 90 for sm_90, sm_90a, compute_90
  int version_major = 0;     // PTX: the ISA version (9.0); cubin: ELF code version
  int version_minor = 0;
  std::uint64_t flags = 0;
  std::uint64_t stored_bytes = 0;        // payload in the file (compressed size if compressed)
  std::uint64_t uncompressed_bytes = 0;  // as the header gives it; 0 when not compressed
  bool relocatable = false;              // from __nv_relfatbin: device-link input
  std::uint32_t container = 0;           // index into FatbinFile::containers

  bool compressed() const {
    return flags & (kFatbinFlagCompressedOld | kFatbinFlagCompressedLz4 | kFatbinFlagCompressedZstd);
  }
  bool arch_specific() const { return flags & kFatbinFlagArchSpecific; }
  bool family_specific() const { return flags & kFatbinFlagFamily; }
};

/// One fatbin container (a module: what the CUDA runtime loads as one).
struct FatbinContainer {
  std::uint64_t offset = 0;  // in the file
  std::uint64_t size = 0;    // container header + entries
  bool relocatable = false;
  std::uint32_t first_entry = 0, entry_count = 0;
};

/// Everything found in one file.
struct FatbinFile {
  bool elf = false;  // an ELF file; false: a raw fatbin
  std::uint16_t elf_machine = 0;  // e_machine: 62 x86-64, 183 AArch64, 190 a cubin (EM_CUDA)
  std::vector<FatbinContainer> containers;
  std::vector<FatbinEntry> entries;
  int executable_sections = 0;   // .nv_fatbin sections seen
  int relocatable_sections = 0;  // __nv_relfatbin sections seen
};

/// "sm_90a" (cubin), "compute_100f" (PTX), "lto_90" (LTO-IR), "kind7_90".
std::string fatbin_target_name(const FatbinEntry& e);

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
