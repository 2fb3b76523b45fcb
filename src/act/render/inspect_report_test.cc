#include "act/render/inspect_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "builders.h"
#include "fatbin_builders.h"

namespace gpuenv {
namespace {

using testing::fatbin::parsed_file;

InspectedFile judged(const std::string& path, const std::vector<testing::fatbin::Fatbin>& fatbins,
                     const Machine& m) {
  InspectedFile f{path, "", parsed_file(fatbins), {}};
  f.verdict = judge_binary(f.fatbin, m);
  return f;
}

// The lines no committed fixture reaches (tests/golden/inspect.txt has the
// rest): a GPU of unknown capability, and a native verdict with fatbins
// that only PTX serves.
TEST(InspectReport, UnknownCapabilityAndPtxOnlyFatbins) {
  Machine m = testing::machine::h200(2);
  m.gpus[1].compute_capability.reset();
  std::vector<InspectedFile> files = {
      judged("/lib/x.so", {{{"sm_90"}}, {{"compute_90@9.0"}}}, m),
      {"/lib/bad.so", "open(/lib/bad.so): Permission denied", {}, {}}};
  EXPECT_EQ(render_inspect(files, m),
            "/lib/x.so: ELF, 2 fatbins, 2 entries (0 compressed)\n"
            "  sm_90: 1 cubin\n"
            "  compute_90 PTX (ISA 9.0): 1\n"
            "  GPU 0 NVIDIA H200 (Hopper, 9.0): native: runs the sm_90 cubin natively\n"
            "      1 of 2 fatbins have only PTX for 9.0: JIT-compiled when first loaded\n"
            "  GPU 1 NVIDIA H200 (cc unknown): unknown: the compute capability was not sensed\n");
  nlohmann::json j = inspect_json(files, 3);
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_EQ(j["files"][0]["verdicts"][0]["fatbins_jit"], 1);
  EXPECT_EQ(j["files"][0]["verdicts"][1], nlohmann::json({{"gpu", 1},
                                                          {"name", "NVIDIA H200"},
                                                          {"compute_capability", nullptr},
                                                          {"verdict", "unknown"}}));
  EXPECT_EQ(j["files"][1], nlohmann::json({{"path", "/lib/bad.so"},
                                           {"error", "open(/lib/bad.so): Permission denied"}}));
}

}  // namespace
}  // namespace gpuenv
