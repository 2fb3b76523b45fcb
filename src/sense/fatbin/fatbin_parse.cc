#include "sense/fatbin/fatbin_parse.h"

#include <algorithm>
#include <cstdio>

namespace gpuenv {
namespace {

constexpr std::uint64_t kContainerHeaderMin = 16;
constexpr int kMaxArch = 999;  // sm_999: anything above is a corrupt header

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// "offset 0x1234: " for a position inside `r`, as a file offset.
std::string at(const ByteReader& r, std::uint64_t offset) {
  return "offset " + hex(r.base() + offset) + ": ";
}

bool fail(std::string* err, std::string message) {
  *err = std::move(message);
  return false;
}

// The fixed part of an entry header (docs/inspect.md has the layout).
bool read_entry_fields(const ByteReader& r, std::uint64_t pos, FatbinEntry* e) {
  std::uint16_t minor = 0, major = 0;
  std::uint32_t compressed = 0, arch = 0;
  std::uint64_t uncompressed = 0;
  bool ok = r.u16(pos, &e->kind) && r.u32(pos + 16, &compressed) && r.u16(pos + 24, &minor) &&
            r.u16(pos + 26, &major) && r.u32(pos + 28, &arch) && r.u64(pos + 40, &e->flags) &&
            r.u64(pos + 56, &uncompressed);
  e->version_major = major;
  e->version_minor = minor;
  e->arch = arch > kMaxArch ? -1 : int(arch);
  if (e->compressed()) {
    e->stored_bytes = compressed;
    e->uncompressed_bytes = uncompressed;
  }
  return ok;
}

// One entry at `pos`, which must end by `end`; *next is where the next begins.
bool parse_entry(const ByteReader& r, std::uint64_t pos, std::uint64_t end, FatbinEntry* e,
                 std::uint64_t* next, std::string* err) {
  std::uint32_t header = 0;
  std::uint64_t payload = 0;
  if (end - pos < kFatbinEntryHeaderMin || !r.u32(pos + 4, &header) || !r.u64(pos + 8, &payload))
    return fail(err, at(r, pos) + "fatbin entry header truncated: " + std::to_string(end - pos) +
                         " bytes left in the container, 64 needed");
  if (header < kFatbinEntryHeaderMin || header > end - pos)
    return fail(err, at(r, pos) + "fatbin entry header size " + std::to_string(header) +
                         " is outside 64.." + std::to_string(end - pos));
  if (payload > end - pos - header)
    return fail(err, at(r, pos) + "fatbin entry payload of " + std::to_string(payload) +
                         " bytes runs past its container's end at " + hex(r.base() + end));
  e->offset = r.base() + pos;
  e->stored_bytes = payload;
  if (!read_entry_fields(r, pos, e))  // inside [pos, pos + 64): cannot fail
    return fail(err, at(r, pos) + "fatbin entry header unreadable");
  if (e->arch < 0) return fail(err, at(r, pos) + "fatbin entry architecture is not a number below 1000");
  if (e->stored_bytes > payload)
    return fail(err, at(r, pos) + "fatbin entry compressed size " + std::to_string(e->stored_bytes) +
                         " exceeds its payload of " + std::to_string(payload) + " bytes");
  *next = pos + header + payload;
  return true;
}

// The container header at `pos`; *end is where its entries stop.
bool parse_container_header(const ByteReader& r, std::uint64_t pos, std::uint64_t* first,
                            std::uint64_t* end, std::string* err) {
  std::uint32_t magic = 0;
  std::uint16_t version = 0, header = 0;
  std::uint64_t fat_size = 0;
  if (!r.u32(pos, &magic) || !r.u16(pos + 4, &version) || !r.u16(pos + 6, &header) ||
      !r.u64(pos + 8, &fat_size))
    return fail(err, at(r, pos) + "fatbin header truncated: " + std::to_string(r.size() - pos) +
                         " bytes left, 16 needed");
  if (magic != kFatbinMagic)
    return fail(err, at(r, pos) + "no fatbin magic (0xba55ed50), found " + hex(magic));
  if (version != 1)
    return fail(err, at(r, pos) + "fatbin version " + std::to_string(version) + " is not 1");
  if (header < kContainerHeaderMin)
    return fail(err, at(r, pos) + "fatbin header size " + std::to_string(header) + " is below 16");
  if (!r.contains(pos, header) || fat_size > r.size() - pos - header)
    return fail(err, at(r, pos) + "fatbin of " + std::to_string(header) + " + " +
                         std::to_string(fat_size) + " bytes runs past the end of its region (" +
                         std::to_string(r.size() - pos) + " bytes left)");
  *first = pos + header;
  *end = *first + fat_size;
  return true;
}

bool parse_container(const ByteReader& r, std::uint64_t pos, bool relocatable, FatbinFile* out,
                     std::uint64_t* next, std::string* err) {
  std::uint64_t entry = 0, end = 0;
  if (!parse_container_header(r, pos, &entry, &end, err)) return false;
  FatbinContainer c{r.base() + pos, end - pos, relocatable,
                    static_cast<std::uint32_t>(out->entries.size()), 0};
  while (entry < end) {
    FatbinEntry e;
    e.relocatable = relocatable;
    e.container = static_cast<std::uint32_t>(out->containers.size());
    if (!parse_entry(r, entry, end, &e, &entry, err)) return false;
    out->entries.push_back(e);
    ++c.entry_count;
  }
  out->containers.push_back(c);
  *next = end;
  return true;
}

// Past zero bytes (alignment padding between linked-in fatbins).
std::uint64_t skip_zeros(const ByteReader& r, std::uint64_t pos) {
  std::uint8_t b = 0;
  while (r.u8(pos, &b) && b == 0) ++pos;
  return pos;
}

// ELF64 little-endian: the section header table and the names' table.
struct ElfSections {
  ByteReader table;  // e_shnum entries of e_shentsize bytes
  std::uint64_t count = 0, entry_size = 0;
  ByteReader names;
};

constexpr std::uint64_t kElfHeaderSize = 64;
constexpr std::uint64_t kSectionHeaderMin = 64;
constexpr std::uint32_t kShtNobits = 8;
constexpr std::uint16_t kShnXindex = 0xffff;

bool is_elf(const ByteReader& f) {
  std::uint32_t magic = 0;
  return f.u32(0, &magic) && magic == 0x464c457f;  // "\x7fELF"
}

bool check_elf_ident(const ByteReader& f, std::string* err) {
  std::uint8_t cls = 0, data = 0;
  if (f.size() < kElfHeaderSize || !f.u8(4, &cls) || !f.u8(5, &data))
    return fail(err, "ELF header truncated (" + std::to_string(f.size()) + " bytes)");
  if (cls != 2 || data != 1)
    return fail(err, "not a 64-bit little-endian ELF file (class " + std::to_string(cls) +
                         ", data " + std::to_string(data) + ")");
  return true;
}

// A section header's field; `index` is checked by the caller.
bool section_field32(const ElfSections& s, std::uint64_t index, std::uint64_t field,
                     std::uint32_t* v) {
  return s.table.u32(index * s.entry_size + field, v);
}
bool section_field64(const ElfSections& s, std::uint64_t index, std::uint64_t field,
                     std::uint64_t* v) {
  return s.table.u64(index * s.entry_size + field, v);
}

// The bytes of section `index` (sh_offset, sh_size) as a reader.
bool section_bytes(const ByteReader& f, const ElfSections& s, std::uint64_t index, ByteReader* out,
                   std::string* err) {
  std::uint64_t offset = 0, size = 0;
  if (!section_field64(s, index, 0x18, &offset) || !section_field64(s, index, 0x20, &size))
    return fail(err, "section header " + std::to_string(index) + " truncated");
  if (!f.slice(offset, size, out))
    return fail(err, "section " + std::to_string(index) + " (offset " + hex(offset) + ", " +
                         std::to_string(size) + " bytes) runs past the end of the file (" +
                         std::to_string(f.size()) + " bytes)");
  return true;
}

bool read_section_table(const ByteReader& f, ElfSections* s, std::string* err) {
  std::uint64_t shoff = 0;
  std::uint16_t entsize = 0, shnum = 0, shstrndx = 0;
  if (!f.u64(0x28, &shoff) || !f.u16(0x3a, &entsize) || !f.u16(0x3c, &shnum) ||
      !f.u16(0x3e, &shstrndx))
    return fail(err, "ELF header truncated");
  if (shoff == 0) return true;  // no section table: nothing to find
  if (entsize < kSectionHeaderMin)
    return fail(err, "ELF section header size " + std::to_string(entsize) + " is below 64");
  s->entry_size = entsize;
  if (!f.slice(shoff, entsize, &s->table))
    return fail(err, "ELF section table offset " + hex(shoff) + " is past the end of the file");
  std::uint64_t count = shnum, strndx = shstrndx;
  std::uint32_t link = 0;
  if (count == 0) section_field64(*s, 0, 0x20, &count);  // extended numbering: sh_size of [0]
  if (strndx == kShnXindex && section_field32(*s, 0, 0x28, &link)) strndx = link;
  if (count > (f.size() - shoff) / entsize)
    return fail(err, "ELF section table (" + std::to_string(count) + " entries at " + hex(shoff) +
                         ") runs past the end of the file");
  if (count == 0) return true;
  f.slice(shoff, count * entsize, &s->table);  // in bounds: checked above
  s->count = count;
  if (strndx >= count)
    return fail(err, "ELF section-name table index " + std::to_string(strndx) + " is out of range");
  return section_bytes(f, *s, strndx, &s->names, err);
}

constexpr std::uint64_t kLongestFatbinName = 14;  // "__nv_relfatbin"

// Which fatbin section `index` is: 1 .nv_fatbin, 2 __nv_relfatbin, 0 neither.
// Only the first 15 bytes of a name are looked at.
int fatbin_section_kind(const ElfSections& s, std::uint64_t index) {
  std::uint32_t name = 0, type = 0;
  std::string_view text;
  if (!section_field32(s, index, 0, &name) || !section_field32(s, index, 4, &type) ||
      type == kShtNobits || !s.names.cstring(name, &text, kLongestFatbinName + 1))
    return 0;
  if (text == ".nv_fatbin") return 1;
  if (text == "__nv_relfatbin") return 2;
  return 0;
}

// A fatbin section's bytes: [offset, end) of the file.
struct FatbinRange {
  std::uint64_t offset = 0, end = 0;
  bool relocatable = false;
  std::uint64_t section = 0;  // the index of the first section it came from
};

const char* section_name(bool relocatable) { return relocatable ? "__nv_relfatbin" : ".nv_fatbin"; }

// The ranges of the fatbin sections, sorted, with repeated and overlapping
// ones of a kind merged, so that no byte is parsed twice however many
// section headers point at it. A .nv_fatbin overlapping an __nv_relfatbin
// is refused: no linker writes one.
bool merge_ranges(std::vector<FatbinRange> in, std::vector<FatbinRange>* out, std::string* err) {
  std::sort(in.begin(), in.end(), [](const FatbinRange& a, const FatbinRange& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.end > b.end;
  });
  for (const FatbinRange& r : in) {
    if (out->empty() || r.offset >= out->back().end) {
      out->push_back(r);
      continue;
    }
    FatbinRange& last = out->back();
    if (r.relocatable != last.relocatable)
      return fail(err, "sections " + std::to_string(last.section) + " (" +
                           section_name(last.relocatable) + ") and " + std::to_string(r.section) +
                           " (" + section_name(r.relocatable) + ") overlap");
    last.end = std::max(last.end, r.end);
  }
  return true;
}

// Every .nv_fatbin and __nv_relfatbin section's range, counted in *out.
bool fatbin_ranges(const ByteReader& f, const ElfSections& s, FatbinFile* out,
                   std::vector<FatbinRange>* ranges, std::string* err) {
  std::vector<FatbinRange> found;
  for (std::uint64_t i = 0; i < s.count; ++i) {
    int kind = fatbin_section_kind(s, i);
    if (kind == 0) continue;
    (kind == 1 ? out->executable_sections : out->relocatable_sections) += 1;
    ByteReader bytes;
    std::string why;
    if (!section_bytes(f, s, i, &bytes, &why))
      return fail(err, std::string(section_name(kind == 2)) + " section: " + why);
    if (bytes.size() > 0)
      found.push_back({bytes.base(), bytes.base() + bytes.size(), kind == 2, i});
  }
  return merge_ranges(std::move(found), ranges, err);
}

bool parse_range(const ByteReader& f, const FatbinRange& r, FatbinFile* out, std::string* err) {
  ByteReader bytes;
  std::string why;
  f.slice(r.offset, r.end - r.offset, &bytes);  // inside: every section it merges was
  if (parse_fatbin_region(bytes, r.relocatable, out, &why)) return true;
  return fail(err, std::string(section_name(r.relocatable)) + " section: " + why);
}

bool parse_elf(const ByteReader& f, FatbinFile* out, std::string* err) {
  ElfSections s;
  if (!check_elf_ident(f, err) || !read_section_table(f, &s, err)) return false;
  out->elf = true;
  f.u16(0x12, &out->elf_machine);
  std::vector<FatbinRange> ranges;
  if (!fatbin_ranges(f, s, out, &ranges, err)) return false;
  for (const FatbinRange& r : ranges)
    if (!parse_range(f, r, out, err)) return false;
  return true;
}

}  // namespace

bool ByteReader::slice(std::uint64_t offset, std::uint64_t length, ByteReader* out) const {
  if (!contains(offset, length)) return false;
  *out = ByteReader(bytes_.subspan(offset, length), base_ + offset);
  return true;
}

bool ByteReader::cstring(std::uint64_t offset, std::string_view* out, std::uint64_t max) const {
  if (offset >= size()) return false;
  std::uint64_t limit = size() - offset > max ? offset + max : size();
  std::uint64_t end = offset;
  while (end < limit && bytes_[end] != 0) ++end;
  if (end == limit) return false;
  *out = std::string_view(reinterpret_cast<const char*>(bytes_.data() + offset), end - offset);
  return true;
}

bool parse_fatbin_region(const ByteReader& region, bool relocatable, FatbinFile* out,
                         std::string* err) {
  for (std::uint64_t pos = skip_zeros(region, 0); pos < region.size();
       pos = skip_zeros(region, pos)) {
    if (!parse_container(region, pos, relocatable, out, &pos, err)) return false;
  }
  return true;
}

bool parse_cuda_binary(const ByteReader& file, FatbinFile* out, std::string* err) {
  std::uint32_t magic = 0;
  if (is_elf(file)) return parse_elf(file, out, err);
  if (file.u32(0, &magic) && magic == kFatbinMagic) return parse_fatbin_region(file, false, out, err);
  return fail(err, file.size() < 4 ? "too short to be an ELF file or a fatbin (" +
                                         std::to_string(file.size()) + " bytes)"
                                   : "neither an ELF file nor a fatbin (starts with " +
                                         hex(magic) + ")");
}

}  // namespace gpuenv
