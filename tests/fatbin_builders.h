// Builders for hand-made CUDA binaries in tests: fatbin entries and
// containers, and ELF64 files holding them in named sections.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sense/fatbin/fatbin_parse.h"

namespace gpuenv::testing::fatbin {

using Bytes = std::vector<std::uint8_t>;

/// Writes the low `n` bytes of v at `at`, little-endian, growing *b.
void put(Bytes* b, std::size_t at, std::uint64_t v, int n);

struct Entry {
  std::uint16_t kind = kFatbinKindCubin;
  std::uint32_t header = 64;
  std::uint64_t payload = 8;
  std::uint32_t arch = 80;
  std::uint64_t flags = 0x11;
  std::uint32_t compressed = 0;
};

/// One entry: its header, then `payload` bytes of 0xee (none past 4 KiB).
Bytes entry_bytes(const Entry& e);

/// A container holding `entries`; fat_size is their total unless given.
Bytes container(const std::vector<Entry>& entries, std::optional<std::uint64_t> fat_size = {});

struct Section {
  std::string name;
  std::uint32_t type = 1;  // PROGBITS
  Bytes data;
  std::optional<std::uint64_t> offset = {}, size = {};  // override what the header says
};

Section section(std::string name, Bytes data, std::uint32_t type = 1);

/// A section whose header claims `offset` and `size`, whatever it holds.
Section lying(std::string name, Bytes data, std::uint64_t offset, std::uint64_t size);

/// ELF64 LE: header, section data, names, section headers ([0] is null).
/// The first section's data starts at offset 64.
Bytes elf(const std::vector<Section>& sections);

/// One fatbin (a module) as the parser would report it: its entries named
/// as inspect names them, PTX with its ISA ("sm_90a", "compute_100f@8.8",
/// "lto_90"); a trailing '*' marks a compressed entry.
struct Fatbin {
  std::vector<std::string> entries;
  bool relocatable = false;  // in __nv_relfatbin
};

/// The FatbinEntry for one such name, in container `container`.
FatbinEntry parsed_entry(std::string name, bool relocatable = false, std::uint32_t container = 0);

/// The FatbinFile of an ELF file holding `fatbins` (parsed: no bytes).
FatbinFile parsed_file(const std::vector<Fatbin>& fatbins);

/// The amplification shape: one .nv_fatbin section holding a container of
/// `entries` cubins, and `headers` - 1 more section headers over the same
/// bytes.
Bytes repeated_sections(int entries, int headers);

}  // namespace gpuenv::testing::fatbin
