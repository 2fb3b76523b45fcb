// The CUDA code one file carries, as sense/fatbin/fatbin_parse.h reads it from the
// file's headers: its fatbin containers (modules) and their entries (cubins,
// PTX, LTO-IR). Plain data; decide/kernel_verdict.h judges it. The layout
// behind these fields is in docs/inspect.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/hardware/kernel_target.h"

namespace gpuenv {

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
    return flags &
           (kFatbinFlagCompressedOld | kFatbinFlagCompressedLz4 | kFatbinFlagCompressedZstd);
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
  bool elf = false;               // an ELF file; false: a raw fatbin
  std::uint16_t elf_machine = 0;  // e_machine: 62 x86-64, 183 AArch64, 190 a cubin (EM_CUDA)
  std::vector<FatbinContainer> containers;
  std::vector<FatbinEntry> entries;
  int executable_sections = 0;   // .nv_fatbin sections seen
  int relocatable_sections = 0;  // __nv_relfatbin sections seen

  /// Only __nv_relfatbin (an -rdc object): then that is the code judged,
  /// as cuobjdump does; otherwise .nv_fatbin is (docs/inspect.md).
  bool relfatbin_only() const { return executable_sections == 0 && relocatable_sections > 0; }
};

/// The entry's suffix: a, f or none.
TargetVariant target_variant(const FatbinEntry& e);

/// "sm_90a" (cubin), "compute_100f" (PTX): model/hardware/kernel_target.h's
/// names; "lto_90" (LTO-IR), "kind7_90" for the kinds that are no target.
std::string fatbin_target_name(const FatbinEntry& e);

}  // namespace gpuenv
