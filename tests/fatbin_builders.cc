#include "fatbin_builders.h"

namespace gpuenv::testing::fatbin {

void put(Bytes* b, std::size_t at, std::uint64_t v, int n) {
  if (b->size() < at + n) b->resize(at + n);
  for (int i = 0; i < n; ++i) (*b)[at + i] = std::uint8_t(v >> (8 * i));
}

Bytes entry_bytes(const Entry& e) {
  Bytes b(e.header >= 64 ? e.header : 64, 0);
  put(&b, 0, e.kind, 2);
  put(&b, 2, 0x0101, 2);
  put(&b, 4, e.header, 4);
  put(&b, 8, e.payload, 8);
  put(&b, 16, e.compressed, 4);
  put(&b, 26, e.kind == kFatbinKindPtx ? 9 : 1, 2);
  put(&b, 28, e.arch, 4);
  put(&b, 40, e.flags, 8);
  b.resize(b.size() + (e.payload < 4096 ? e.payload : 0), 0xee);
  return b;
}

Bytes container(const std::vector<Entry>& entries, std::optional<std::uint64_t> fat_size) {
  Bytes body;
  for (const auto& e : entries) {
    Bytes b = entry_bytes(e);
    body.insert(body.end(), b.begin(), b.end());
  }
  Bytes out;
  put(&out, 0, kFatbinMagic, 4);
  put(&out, 4, 1, 2);
  put(&out, 6, 16, 2);
  put(&out, 8, fat_size.value_or(body.size()), 8);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

Section section(std::string name, Bytes data, std::uint32_t type) {
  return {std::move(name), type, std::move(data)};
}

Section lying(std::string name, Bytes data, std::uint64_t offset, std::uint64_t size) {
  Section s = section(std::move(name), std::move(data));
  s.offset = offset;
  s.size = size;
  return s;
}

Bytes elf(const std::vector<Section>& sections) {
  Bytes b(64, 0);
  put(&b, 0, 0x464c457f, 4);
  put(&b, 4, 2, 1);  // ELFCLASS64
  put(&b, 5, 1, 1);  // ELFDATA2LSB
  std::vector<std::uint64_t> offsets;
  for (const auto& s : sections) {
    offsets.push_back(b.size());
    b.insert(b.end(), s.data.begin(), s.data.end());
  }
  Bytes names(1, 0);
  std::vector<std::uint32_t> name_at;
  for (const auto& s : sections) {
    name_at.push_back(names.size());
    names.insert(names.end(), s.name.begin(), s.name.end());
    names.push_back(0);
  }
  std::uint64_t names_at = b.size(), shoff = b.size() + names.size();
  b.insert(b.end(), names.begin(), names.end());
  std::size_t n = sections.size() + 2;
  b.resize(shoff + 64 * n, 0);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    std::size_t h = shoff + 64 * (i + 1);
    put(&b, h, name_at[i], 4);
    put(&b, h + 4, sections[i].type, 4);
    put(&b, h + 0x18, sections[i].offset.value_or(offsets[i]), 8);
    put(&b, h + 0x20, sections[i].size.value_or(sections[i].data.size()), 8);
  }
  std::size_t h = shoff + 64 * (n - 1);  // .shstrtab, unnamed
  put(&b, h + 4, 3, 4);
  put(&b, h + 0x18, names_at, 8);
  put(&b, h + 0x20, names.size(), 8);
  put(&b, 0x28, shoff, 8);
  put(&b, 0x3a, 64, 2);
  put(&b, 0x3c, n, 2);
  put(&b, 0x3e, n - 1, 2);
  return b;
}

Bytes repeated_sections(int entries, int headers) {
  Bytes fat = container(std::vector<Entry>(entries, Entry{.payload = 0}));
  std::vector<Section> sections = {section(".nv_fatbin", fat)};
  for (int i = 1; i < headers; ++i) sections.push_back(lying(".nv_fatbin", {}, 64, fat.size()));
  return elf(sections);
}

FatbinEntry parsed_entry(std::string name, bool relocatable, std::uint32_t container) {
  FatbinEntry e;
  e.relocatable = relocatable;
  e.container = container;
  if (name.back() == '*') e.flags |= kFatbinFlagCompressedZstd, name.pop_back();
  if (auto at = name.find('@'); at != std::string::npos) {
    e.version_major = std::stoi(name.substr(at + 1));
    e.version_minor = std::stoi(name.substr(name.find('.', at) + 1));
    name.resize(at);
  }
  e.kind = name.rfind("sm_", 0) == 0 ? kFatbinKindCubin : name.rfind("lto_", 0) == 0 ? kFatbinKindLtoIr : kFatbinKindPtx;
  if (name.back() == 'a') e.flags |= kFatbinFlagArchSpecific, name.pop_back();
  if (name.back() == 'f') e.flags |= kFatbinFlagFamily, name.pop_back();
  e.arch = std::stoi(name.substr(name.find('_') + 1));
  return e;
}

FatbinFile parsed_file(const std::vector<Fatbin>& fatbins) {
  FatbinFile f;
  f.elf = true;
  for (const Fatbin& b : fatbins) {
    FatbinContainer c;
    c.relocatable = b.relocatable;
    c.first_entry = f.entries.size();
    c.entry_count = b.entries.size();
    for (const auto& n : b.entries) f.entries.push_back(parsed_entry(n, b.relocatable, f.containers.size()));
    f.containers.push_back(c);
    (b.relocatable ? f.relocatable_sections : f.executable_sections) = 1;
  }
  return f;
}

}  // namespace gpuenv::testing::fatbin
