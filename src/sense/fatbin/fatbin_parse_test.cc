#include "sense/fatbin/fatbin_parse.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>

#include "fatbin_builders.h"
#include "sense/fatbin/fatbin_file.h"
#include "test_paths.h"

namespace gpuenv {
namespace {

using namespace testing::fatbin;
using Counts = std::map<std::string, int>;

// --- real fixtures (tests/fatbins/make.sh) ---

// "sm_90", "compute_90 isa 9.0", with " z" when compressed, and "rel " for
// __nv_relfatbin entries.
Counts counts(const FatbinFile& f, bool with_details) {
  Counts c;
  for (const auto& e : f.entries) {
    std::string key = (e.relocatable ? "rel " : "") + fatbin_target_name(e);
    if (with_details && e.kind == kFatbinKindPtx)
      key += " isa " + std::to_string(e.version_major) + "." + std::to_string(e.version_minor);
    if (with_details && e.compressed()) key += " z";
    ++c[key];
  }
  return c;
}

struct Fixture {
  std::string file;
  bool elf;
  int containers;
  Counts want;          // exact, for the committed copies (CUDA 13.0)
  Counts want_targets;  // without ISA and compression: any nvcc that builds it
};

const std::vector<Fixture>& fixtures() {
  static const std::vector<Fixture> kFixtures = {
      {"sm80_sm90_ptx90.fatbin", false, 1,
       {{"sm_80", 1}, {"sm_90", 1}, {"compute_90 isa 9.0 z", 1}},
       {{"sm_80", 1}, {"sm_90", 1}, {"compute_90", 1}}},
      {"sm90a.fatbin", false, 1,
       {{"sm_90a", 1}, {"compute_90a isa 9.0 z", 1}},
       {{"sm_90a", 1}, {"compute_90a", 1}}},
      {"sm100f.fatbin", false, 1,
       {{"sm_100f", 1}, {"compute_100f isa 9.0 z", 1}},
       {{"sm_100f", 1}, {"compute_100f", 1}}},
      {"compressed.fatbin", false, 1,
       {{"sm_80 z", 1}, {"sm_90 z", 1}, {"compute_90 isa 9.0 z", 1}},
       {{"sm_80", 1}, {"sm_90", 1}, {"compute_90", 1}}},
      {"sm75_sm86.o", true, 1, {{"sm_75", 1}, {"sm_86", 1}}, {{"sm_75", 1}, {"sm_86", 1}}},
      {"rdc_sm80.o", true, 1,
       {{"rel sm_80 z", 1}, {"rel compute_80 isa 9.0 z", 1}},
       {{"rel sm_80", 1}, {"rel compute_80", 1}}},
      // Two fatbins: the kernel's and the static CUDA runtime's.
      {"sm89_ptx89.so", true, 2,
       {{"sm_89", 2}, {"compute_89 isa 9.0 z", 1}},
       {{"sm_89", 2}, {"compute_89", 1}}},
  };
  return kFixtures;
}

void check_fixture(const std::string& dir, const Fixture& fx, bool exact) {
  std::string path = dir + "/" + fx.file;
  FatbinFile f;
  std::string err;
  ASSERT_TRUE(read_fatbin_file(path, &f, &err)) << err;
  EXPECT_EQ(f.elf, fx.elf) << path;
  EXPECT_EQ(f.containers.size(), std::size_t(fx.containers)) << path;
  EXPECT_EQ(counts(f, exact), exact ? fx.want : fx.want_targets) << path;
  for (const auto& e : f.entries) {
    EXPECT_EQ(e.flags & kFatbinFlag64Bit, kFatbinFlag64Bit) << path;
    if (e.compressed()) {
      EXPECT_GT(e.uncompressed_bytes, e.stored_bytes) << path;
    }
  }
}

TEST(FatbinFixtures, CommittedCopiesCountExactly) {
  for (const auto& fx : fixtures()) check_fixture((test_paths::tests_dir() + "/fatbins"), fx, true);
}

#ifdef GPUENV_HAS_NVCC_FATBINS
// Every fixture, rebuilt by this machine's nvcc (tests/fatbins/make.sh): one
// that nvcc could not build is a failure, never a silent pass.
TEST(FatbinFixtures, BuiltByThisMachinesNvcc) {
  std::vector<std::string> missing;
  for (const auto& fx : fixtures()) {
    std::string path = test_paths::nvcc_fatbins() + "/" + fx.file;
    if (struct stat st; stat(path.c_str(), &st) != 0) {
      missing.push_back(fx.file);
      continue;
    }
    check_fixture(test_paths::nvcc_fatbins(), fx, false);
  }
  EXPECT_EQ(missing, std::vector<std::string>{})
      << "this nvcc could not build these fixtures (the build log says why: tests/fatbins/make.sh)";
}
#endif

TEST(FatbinFixtures, SectionsAndContainers) {
  FatbinFile so, rdc;
  std::string err;
  ASSERT_TRUE(read_fatbin_file((test_paths::tests_dir() + "/fatbins/sm89_ptx89.so"), &so, &err)) << err;
  EXPECT_EQ(so.executable_sections, 1);
  EXPECT_EQ(so.relocatable_sections, 0);
  std::uint32_t total = 0;
  for (const auto& c : so.containers) {
    EXPECT_EQ(c.first_entry, total);
    total += c.entry_count;
  }
  EXPECT_EQ(total, so.entries.size());
  EXPECT_EQ(so.containers[1].offset, so.containers[0].offset + so.containers[0].size);
  ASSERT_TRUE(read_fatbin_file((test_paths::tests_dir() + "/fatbins/rdc_sm80.o"), &rdc, &err)) << err;
  EXPECT_EQ(rdc.executable_sections, 0);
  EXPECT_EQ(rdc.relocatable_sections, 1);
  EXPECT_TRUE(rdc.containers[0].relocatable);
}

TEST(FatbinFixtures, ACubinByItselfHasNoFatbin) {
  FatbinFile f;
  std::string err;
  ASSERT_TRUE(read_fatbin_file((test_paths::tests_dir() + "/fatbins/sm80.cubin"), &f, &err)) << err;
  EXPECT_EQ(f.elf_machine, kElfMachineCuda);
  EXPECT_TRUE(f.entries.empty());
  ASSERT_TRUE(read_fatbin_file((test_paths::tests_dir() + "/fatbins/sm75_sm86.o"), &f, &err)) << err;
  EXPECT_EQ(f.elf_machine, 62);  // x86-64
}

TEST(FatbinFixtures, EntryHeaderFields) {
  FatbinFile f;
  std::string err;
  ASSERT_TRUE(read_fatbin_file((test_paths::tests_dir() + "/fatbins/sm80_sm90_ptx90.fatbin"), &f, &err)) << err;
  ASSERT_EQ(f.entries.size(), 3u);
  const FatbinEntry& cubin = f.entries[0];
  EXPECT_EQ(cubin.offset, 16u);  // right after the 16-byte container header
  EXPECT_EQ(cubin.kind, kFatbinKindCubin);
  EXPECT_EQ(cubin.arch, 80);
  EXPECT_FALSE(cubin.compressed());
  EXPECT_EQ(cubin.uncompressed_bytes, 0u);
  const FatbinEntry& ptx = f.entries[2];
  EXPECT_EQ(ptx.kind, kFatbinKindPtx);
  EXPECT_EQ(ptx.arch, 90);
  EXPECT_TRUE(ptx.flags & kFatbinFlagCompressedZstd);
  EXPECT_EQ(ptx.version_major, 9);  // nvcc 13.0 writes PTX ISA 9.0
  EXPECT_EQ(ptx.version_minor, 0);
}

// --- hand-made input ---

bool parse(const Bytes& b, FatbinFile* f, std::string* err) {
  return parse_cuda_binary(ByteReader(std::span(b.data(), b.size())), f, err);
}

std::string parse_error(const Bytes& b) {
  FatbinFile f;
  std::string err;
  EXPECT_FALSE(parse(b, &f, &err));
  return err;
}

TEST(FatbinParse, TwoContainersWithPadding) {
  Bytes b = container({{}, {.kind = kFatbinKindPtx, .header = 80, .payload = 16, .arch = 90}});
  Bytes second = container({{.arch = 100, .flags = 0x11 | kFatbinFlagFamily}});
  b.resize(b.size() + 8, 0);  // alignment padding between linked-in fatbins
  b.insert(b.end(), second.begin(), second.end());
  b.resize(b.size() + 16, 0);  // and at the end
  FatbinFile f;
  std::string err;
  ASSERT_TRUE(parse(b, &f, &err)) << err;
  ASSERT_EQ(f.containers.size(), 2u);
  EXPECT_EQ(f.containers[1].first_entry, 2u);
  EXPECT_EQ(counts(f, false), (Counts{{"sm_80", 1}, {"compute_90", 1}, {"sm_100f", 1}}));
  EXPECT_EQ(f.entries[1].offset, 16u + 64 + 8);
}

TEST(FatbinParse, Hostile) {
  Bytes good = container({{}});
  struct Row {
    std::string what;
    Bytes bytes;
    std::string err;
  };
  auto with = [&](std::size_t at, std::uint64_t v, int n) {
    Bytes b = good;
    put(&b, at, v, n);
    return b;
  };
  Bytes trailing = good;
  trailing.insert(trailing.end(), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  std::vector<Row> rows = {
      {"empty", {}, "too short to be an ELF file or a fatbin (0 bytes)"},
      {"text", {'h', 'e', 'l', 'l', 'o'}, "neither an ELF file nor a fatbin (starts with 0x6c6c6568)"},
      {"header cut", Bytes(good.begin(), good.begin() + 10), "offset 0x0: fatbin header truncated"},
      {"version", with(4, 2, 2), "offset 0x0: fatbin version 2 is not 1"},
      {"header size 0", with(6, 0, 2), "offset 0x0: fatbin header size 0 is below 16"},
      {"header size past end", with(6, 0xffff, 2), "fatbin of 65535 + 72 bytes runs past the end"},
      {"fat size past end", with(8, 1000, 8), "fatbin of 16 + 1000 bytes runs past the end"},
      {"fat size absurd", with(8, ~0ull, 8), "runs past the end of its region"},
      {"entry header 0", with(16 + 4, 0, 4), "offset 0x10: fatbin entry header size 0 is outside 64..72"},
      {"entry header huge", with(16 + 4, 0xffffffff, 4), "is outside 64..72"},
      {"payload past end", with(16 + 8, 9, 8), "fatbin entry payload of 9 bytes runs past its container's end at 0x58"},
      {"payload absurd", with(16 + 8, ~0ull, 8), "runs past its container's end"},
      {"arch absurd", with(16 + 28, 123456, 4), "fatbin entry architecture is not a number below 1000"},
      {"compressed size", with(16 + 40, 0x8011, 8) /* compressed, size 0 */, ""},
      {"entry cut", container({{}}, 40), "fatbin entry header truncated: 40 bytes left in the container, 64 needed"},
      {"garbage after", trailing, "offset 0x58: no fatbin magic (0xba55ed50), found 0x4030201"},
  };
  Bytes bad_compressed = with(16 + 40, 0x8011, 8);
  put(&bad_compressed, 16 + 16, 9, 4);
  rows.push_back({"compressed > payload", bad_compressed, "compressed size 9 exceeds its payload of 8 bytes"});
  for (const Row& r : rows) {
    FatbinFile f;
    std::string err;
    bool ok = parse(r.bytes, &f, &err);
    if (r.err.empty()) {
      EXPECT_TRUE(ok) << r.what << ": " << err;
      continue;
    }
    EXPECT_FALSE(ok) << r.what;
    EXPECT_NE(err.find(r.err), std::string::npos) << r.what << ": " << err;
  }
}

TEST(FatbinParse, EveryPrefixOfARealFatbinFailsCleanly) {
  std::ifstream in((test_paths::tests_dir() + "/fatbins/sm80_sm90_ptx90.fatbin"), std::ios::binary);
  Bytes whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(whole.size(), 1000u);
  for (std::size_t n = 0; n < whole.size(); ++n) {
    Bytes prefix(whole.begin(), whole.begin() + n);
    EXPECT_FALSE(parse_error(prefix).empty()) << n;
  }
}

TEST(FatbinParse, CorruptedHeadersNeverReadOutOfBounds) {
  // Each header byte of a real fatbin set to 0x00 and 0xff: an error or a
  // parse, never a crash (the asan preset runs this under ASan).
  std::ifstream in((test_paths::tests_dir() + "/fatbins/sm80_sm90_ptx90.fatbin"), std::ios::binary);
  Bytes whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t i = 0; i < 16 + 64; ++i) {
    for (std::uint8_t v : {0x00, 0xff}) {
      Bytes b = whole;
      b[i] = v;
      FatbinFile f;
      std::string err;
      bool ok = parse(b, &f, &err);
      EXPECT_TRUE(ok || !err.empty()) << i;
    }
  }
}

// --- ELF ---

TEST(FatbinElf, FindsBothSectionsAndIgnoresOthers) {
  Bytes exec = container({{}}), rel = container({{.arch = 90}});
  Bytes b = elf({section(".text", {1, 2, 3}), section(".nv_fatbin", exec),
                 section("__nv_relfatbin", rel), section(".nv_fatbin", {}, 8 /* NOBITS */)});
  FatbinFile f;
  std::string err;
  ASSERT_TRUE(parse(b, &f, &err)) << err;
  EXPECT_TRUE(f.elf);
  EXPECT_EQ(f.executable_sections, 1);
  EXPECT_EQ(f.relocatable_sections, 1);
  EXPECT_EQ(counts(f, false), (Counts{{"sm_80", 1}, {"rel sm_90", 1}}));
  EXPECT_EQ(f.entries[0].offset, 64u + 3 + 16);  // file offsets, not section offsets
}

TEST(FatbinElf, NoFatbinIsNoCudaCode) {
  FatbinFile f;
  std::string err;
  ASSERT_TRUE(parse(elf({section(".text", {1})}), &f, &err)) << err;
  EXPECT_TRUE(f.elf);
  EXPECT_TRUE(f.entries.empty());
  Bytes no_table = elf({});
  put(&no_table, 0x28, 0, 8);  // e_shoff 0: no section table
  ASSERT_TRUE(parse(no_table, &f, &err)) << err;
}

TEST(FatbinElf, Hostile) {
  Bytes fat = container({{}});
  Bytes base = elf({section(".nv_fatbin", fat)});
  std::uint64_t shoff = 0;
  for (int i = 7; i >= 0; --i) shoff = shoff << 8 | base[0x28 + i];
  auto with = [&](std::size_t at, std::uint64_t v, int n) {
    Bytes b = base;
    put(&b, at, v, n);
    return b;
  };
  struct Row {
    std::string what;
    Bytes bytes;
    std::string err;
  } rows[] = {
      {"elf32", with(4, 1, 1), "not a 64-bit little-endian ELF file (class 1, data 1)"},
      {"big endian", with(5, 2, 1), "not a 64-bit little-endian ELF file (class 2, data 2)"},
      {"cut header", Bytes(base.begin(), base.begin() + 40), "ELF header truncated (40 bytes)"},
      {"table past end", with(0x28, base.size() + 1, 8), "is past the end of the file"},
      {"table absurd", with(0x28, ~0ull, 8), "is past the end of the file"},
      {"too many sections", with(0x3c, 0xfff0, 2), "runs past the end of the file"},
      {"small entries", with(0x3a, 10, 2), "ELF section header size 10 is below 64"},
      {"names index", with(0x3e, 40, 2), "ELF section-name table index 40 is out of range"},
      {"section past end", elf({lying(".nv_fatbin", fat, 64, 1u << 20)}),
       ".nv_fatbin section: section 1 (offset 0x40, 1048576 bytes) runs past the end of the file"},
      {"section offset absurd", elf({lying(".nv_fatbin", fat, ~0ull, 8)}), "runs past the end of the file"},
      {"bad fatbin inside", elf({section(".nv_fatbin", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})}),
       ".nv_fatbin section: offset 0x40: no fatbin magic"},
      {"names past end", with(shoff + 64 * 2 + 0x18, ~0ull - 4, 8), "section 2 (offset"},
  };
  for (const Row& r : rows) {
    std::string err = parse_error(r.bytes);
    EXPECT_NE(err.find(r.err), std::string::npos) << r.what << ": " << err;
  }
}

TEST(FatbinElf, OddButValid) {
  Bytes fat = container({{}});
  FatbinFile f;
  std::string err;
  // A section name that runs off the end of the names table is no match.
  Bytes b = elf({section(".nv_fatbin", fat)});
  std::uint64_t shoff = 0;
  for (int i = 7; i >= 0; --i) shoff = shoff << 8 | b[0x28 + i];
  put(&b, shoff + 64, 0xffff, 4);
  ASSERT_TRUE(parse(b, &f, &err)) << err;
  EXPECT_TRUE(f.entries.empty());
  // Extended numbering: e_shnum 0, the count in section 0's sh_size.
  b = elf({section(".nv_fatbin", fat)});
  put(&b, 0x3c, 0, 2);
  put(&b, shoff + 0x20, 3, 8);
  f = {};
  ASSERT_TRUE(parse(b, &f, &err)) << err;
  EXPECT_EQ(f.entries.size(), 1u);
  // ... and e_shstrndx SHN_XINDEX, the index in section 0's sh_link.
  put(&b, 0x3e, 0xffff, 2);
  put(&b, shoff + 0x28, 2, 4);
  f = {};
  ASSERT_TRUE(parse(b, &f, &err)) << err;
  EXPECT_EQ(f.entries.size(), 1u);
}

// Issue 12: 4,096 section headers over one region made inspect parse it
// 4,096 times (8.9 s and 923 MB for 512 KB; bad_alloc for 2 MB). Each byte
// is parsed once now: the entries are the region's, not 4,096 copies.
TEST(FatbinElf, RepeatedSectionsAreParsedOnce) {
  FatbinFile f;
  std::string err;
  ASSERT_TRUE(parse(repeated_sections(100, 4096), &f, &err)) << err;
  EXPECT_EQ(f.executable_sections, 4096);
  EXPECT_EQ(f.containers.size(), 1u);
  EXPECT_EQ(f.entries.size(), 100u);
}

TEST(FatbinElf, OverlappingSectionsOfAKindMergeAndOfTwoKindsAreRefused) {
  Bytes one = container({{}}), two = container({{.arch = 90}});
  Bytes both = one;
  both.insert(both.end(), two.begin(), two.end());
  // [64, 64 + both) and the first container again, and the second by itself.
  Bytes b = elf({section(".nv_fatbin", both), lying(".nv_fatbin", {}, 64, one.size()),
                 lying(".nv_fatbin", {}, 64 + one.size(), two.size())});
  FatbinFile f;
  std::string err;
  ASSERT_TRUE(parse(b, &f, &err)) << err;
  EXPECT_EQ(f.executable_sections, 3);
  EXPECT_EQ(counts(f, false), (Counts{{"sm_80", 1}, {"sm_90", 1}}));
  // A partial overlap merges into one range too.
  b = elf({lying(".nv_fatbin", both, 64, one.size() + 16), lying(".nv_fatbin", {}, 64 + 16, both.size() - 16)});
  f = {};
  ASSERT_TRUE(parse(b, &f, &err)) << err;
  EXPECT_EQ(f.entries.size(), 2u);
  b = elf({section(".nv_fatbin", both), lying("__nv_relfatbin", {}, 64 + one.size(), two.size())});
  EXPECT_EQ(parse_error(b), "sections 1 (.nv_fatbin) and 2 (__nv_relfatbin) overlap");
}

// --- the reader and the file ---

TEST(FatbinByteReader, BoundsAndOverflow) {
  Bytes b = {1, 2, 3, 4, 'a', 'b', 0, 'c'};
  ByteReader r(std::span(b.data(), b.size()), 100);
  std::uint32_t v32 = 0;
  std::uint64_t v64 = 0;
  EXPECT_TRUE(r.u32(0, &v32));
  EXPECT_EQ(v32, 0x04030201u);
  EXPECT_TRUE(r.u32(4, &v32));
  EXPECT_FALSE(r.u32(5, &v32));
  EXPECT_FALSE(r.u64(1, &v64));
  EXPECT_FALSE(r.u32(~0ull - 1, &v32));
  EXPECT_FALSE(r.contains(1, ~0ull));
  EXPECT_TRUE(r.contains(8, 0));
  ByteReader s;
  ASSERT_TRUE(r.slice(4, 4, &s));
  EXPECT_EQ(s.base(), 104u);
  EXPECT_EQ(s.size(), 4u);
  EXPECT_FALSE(r.slice(4, 5, &s));
  std::string_view text;
  ASSERT_TRUE(r.cstring(4, &text));
  EXPECT_EQ(text, "ab");
  EXPECT_FALSE(r.cstring(7, &text));  // no NUL before the end
  EXPECT_FALSE(r.cstring(8, &text));
  // Bounded: "ab\0" needs 3 bytes; a scan of 2 stops before the NUL.
  EXPECT_TRUE(r.cstring(4, &text, 3));
  EXPECT_FALSE(r.cstring(4, &text, 2));
  EXPECT_FALSE(r.cstring(4, &text, 0));
}

TEST(FatbinFile, ErrorsNameTheFile) {
  FatbinFile f;
  std::string err;
  EXPECT_FALSE(read_fatbin_file("/nonexistent/libx.so", &f, &err));
  EXPECT_EQ(err, "open(/nonexistent/libx.so): No such file or directory");
  EXPECT_FALSE(read_fatbin_file((test_paths::tests_dir() + "/fatbins"), &f, &err));
  EXPECT_EQ(err, (test_paths::tests_dir() + "/fatbins: not a regular file (a directory)"));
  EXPECT_FALSE(read_fatbin_file((test_paths::tests_dir() + "/fatbins/kernel.cu"), &f, &err));
  EXPECT_EQ(err.rfind((test_paths::tests_dir() + "/fatbins/kernel.cu: neither an ELF file nor a fatbin"), 0), 0u)
      << err;
}

TEST(FatbinFile, TargetNames) {
  FatbinEntry e;
  e.kind = kFatbinKindCubin;
  e.arch = 90;
  EXPECT_EQ(fatbin_target_name(e), "sm_90");
  e.flags = kFatbinFlagArchSpecific;
  EXPECT_EQ(fatbin_target_name(e), "sm_90a");
  e.kind = kFatbinKindPtx;
  e.arch = 100;
  e.flags = kFatbinFlagFamily;
  EXPECT_EQ(fatbin_target_name(e), "compute_100f");
  e.kind = kFatbinKindLtoIr;
  e.flags = 0;
  EXPECT_EQ(fatbin_target_name(e), "lto_100");
  e.kind = 4;
  EXPECT_EQ(fatbin_target_name(e), "kind4_100");
}

}  // namespace
}  // namespace gpuenv
