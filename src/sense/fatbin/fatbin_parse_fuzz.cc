// libFuzzer: any bytes either fail to parse with a message, or parse into
// containers and entries that lie inside the input, account for each other
// and are no more than its bytes can hold; the verdicts over them hold for
// every GPU.
#include <cstdio>
#include <cstdlib>

#include "decide/kernel_compat.h"
#include "sense/fatbin/fatbin_parse.h"
#include "fuzz_check.h"

namespace gpuenv {
namespace {

void check_containers(const FatbinFile& f, std::uint64_t size) {
  std::uint32_t next = 0;
  for (const FatbinContainer& c : f.containers) {
    CHECK(c.first_entry == next);
    next += c.entry_count;
    CHECK(c.size >= 16 && c.offset <= size && c.size <= size - c.offset);
  }
  CHECK(next == f.entries.size());
}

void check_entries(const FatbinFile& f, std::uint64_t size) {
  for (const FatbinEntry& e : f.entries) {
    CHECK(e.container < f.containers.size());
    const FatbinContainer& c = f.containers[e.container];
    CHECK(e.offset >= c.offset + 16 && e.offset + 64 <= c.offset + c.size && e.offset < size);
    CHECK(e.relocatable == c.relocatable);
    CHECK(e.arch >= 0 && e.arch <= 999);
    CHECK(!fatbin_target_name(e).empty());
  }
}

void check_verdicts(const FatbinFile& f) {
  std::vector<KernelTarget> targets;
  for (const FatbinEntry& e : f.entries)
    if (e.kind == kFatbinKindCubin || e.kind == kFatbinKindPtx)
      targets.push_back({e.kind == kFatbinKindPtx, cc_from_arch(e.arch),
                         e.arch_specific() ? TargetVariant::kArchSpecific
                         : e.family_specific() ? TargetVariant::kFamily
                                               : TargetVariant::kPlain});
  for (ComputeCapability cc : {ComputeCapability{8, 0}, {8, 7}, {9, 0}, {10, 3}, {12, 1}}) {
    KernelCompat k = kernel_compat(targets, cc);
    CHECK(!k.reason.empty());
    CHECK((k.verdict == KernelVerdict::kCannotRun) == !k.image.has_value());
    if (k.image) CHECK(k.image->ptx ? ptx_jits_for(*k.image, cc) : cubin_runs_on(*k.image, cc));
  }
}

}  // namespace
}  // namespace gpuenv

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuenv;
  FatbinFile f;
  std::string err;
  if (!parse_cuda_binary(ByteReader(std::span(data, size)), &f, &err)) {
    CHECK(!err.empty());  // every failure says why
    return 0;
  }
  CHECK(f.elf || f.containers.size() > 0);
  // Work bounded by the input: each entry and container its own bytes, even
  // where many section headers point at one region (issue 12).
  CHECK(f.entries.size() <= size / kFatbinEntryHeaderMin);
  CHECK(f.containers.size() <= size / 16);
  check_containers(f, size);
  check_entries(f, size);
  check_verdicts(f);
  return 0;
}
