// `gpuenv labels --namespace nvidia.com` end to end: the real binary over the
// stand-in NVML writes the labels GFD's own end-to-end test expects on such
// a machine (NVIDIA/k8s-device-plugin tests/expected-output-mig-{none,single,
// mixed}.txt, commit 03f72f90), every one of them and no other, with exact
// values; it yields nvidia.com/ to a GFD feature file beside its own; it
// reads the device plugin's config. And docs/cluster.md's table of GFD
// labels by machine profile is what the binary writes for those profiles.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "container_support.h"
#include "process.h"
#include "test_paths.h"
#include "text_files.h"

namespace gpuenv::testing {
namespace {

using Labels = std::map<std::string, std::string>;

using testing::slurp;

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// The feature file's nvidia.com/ labels (prefix taken off); gpuenv.dev/ ones in *own.
Labels nvidia_labels(const std::string& file, Labels* own = nullptr) {
  Labels out;
  std::istringstream in(file);
  static const std::regex line(R"((nvidia\.com|gpuenv\.dev)/([A-Za-z0-9][-A-Za-z0-9_.]*)=(.*))");
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("#", 0) == 0) continue;
    std::smatch m;
    EXPECT_TRUE(std::regex_match(l, m, line)) << l;
    if (m.size() != 4) continue;
    if (m[1] == "nvidia.com") out[m[2]] = m[3];
    else if (own) (*own)[m[2]] = m[3];
  }
  return out;
}

std::set<std::string> keys(const Labels& l) {
  std::set<std::string> out;
  for (const auto& [k, v] : l) out.insert(k);
  return out;
}

// The keys of GFD's expected-output files, nvidia.com/ taken off. Not
// served: gfd.timestamp (when GFD last ran; gpuenv's file carries NFD's
// expiry-time instead). A mixed file's mig-<profile> keys, once per profile.
const std::vector<std::string> kNone = {
    "cuda.driver.major", "cuda.driver.minor", "cuda.driver.rev", "cuda.runtime.major", "cuda.runtime.minor",
    "cuda.driver-version.major", "cuda.driver-version.minor", "cuda.driver-version.revision",
    "cuda.driver-version.full", "cuda.runtime-version.major", "cuda.runtime-version.minor",
    "cuda.runtime-version.full", "gpu.machine", "gpu.count", "gpu.replicas", "gpu.sharing-strategy", "gpu.product",
    "gpu.memory", "gpu.family", "gpu.mode", "mig.capable", "gpu.compute.major", "gpu.compute.minor", "mps.capable"};
const std::vector<std::string> kSingle = {"mig.strategy", "gpu.multiprocessors", "gpu.engines.copy",
                                          "gpu.engines.decoder", "gpu.engines.encoder", "gpu.engines.jpeg",
                                          "gpu.engines.ofa", "gpu.slices.gi", "gpu.slices.ci"};
const std::vector<std::string> kMixedProfile = {"product", "count", "replicas", "sharing-strategy", "memory",
                                                "multiprocessors", "engines.copy", "engines.decoder",
                                                "engines.encoder", "engines.jpeg", "engines.ofa", "slices.gi",
                                                "slices.ci"};

std::set<std::string> expected_keys(const std::string& file, const std::vector<std::string>& profiles = {}) {
  std::set<std::string> out(kNone.begin(), kNone.end());
  if (file == "single") out.insert(kSingle.begin(), kSingle.end());
  if (file == "mixed") out.insert("mig.strategy");
  for (const std::string& p : profiles)
    for (const std::string& k : kMixedProfile) out.insert("mig-" + p + "." + k);
  return out;
}

ProcessResult labels(const std::string& scenario, const std::string& features_d,
                     std::vector<std::string> more = {}) {
  ProcessOptions o = stand_ins(scenario);
  o.env["GPUENV_FEATURES_D"] = features_d;
  std::vector<std::string> args = {"labels", "--once", "--output", "-", "--namespace", "nvidia.com",
                                   "--cache-root", features_d + "/cache"};
  args.insert(args.end(), more.begin(), more.end());
  return run_gpuenv(args, o);
}

// The host's own DMI name and the stand-in GPUs' (absent) sysfs class come
// from the machine that runs the test: only their form is checked.
void expect_values(const Labels& got, const Labels& want, const std::string& what) {
  for (const auto& [k, v] : want) EXPECT_EQ(got.count(k) ? got.at(k) : "(none)", v) << what << ": " << k;
  EXPECT_TRUE(std::regex_match(got.count("gpu.mode") ? got.at("gpu.mode") : "", std::regex("compute|graphics|unknown")))
      << what;
  EXPECT_TRUE(got.count("gpu.machine")) << what;
}

const Labels kDriver570 = {{"cuda.driver.major", "570"},
                           {"cuda.driver.minor", "153"},
                           {"cuda.driver.rev", "02"},
                           {"cuda.driver-version.major", "570"},
                           {"cuda.driver-version.minor", "153"},
                           {"cuda.driver-version.revision", "02"},
                           {"cuda.driver-version.full", "570.153.02"},
                           {"cuda.runtime.major", "12"},
                           {"cuda.runtime.minor", "8"},
                           {"cuda.runtime-version.major", "12"},
                           {"cuda.runtime-version.minor", "8"},
                           {"cuda.runtime-version.full", "12.8"}};

Labels with(Labels base, const Labels& more) {
  for (const auto& [k, v] : more) base[k] = v;
  return base;
}

TEST(GfdLabelsCli, NoMigAsExpectedOutputMigNone) {
  ScratchDir dir;
  ProcessResult r = labels("h200", dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Labels own, got = nvidia_labels(r.out, &own);
  EXPECT_EQ(keys(got), expected_keys("none")) << r.out;
  expect_values(got,
                {{"gpu.count", "1"}, {"gpu.replicas", "1"}, {"gpu.sharing-strategy", "none"},
                 {"gpu.product", "NVIDIA-H200"}, {"gpu.memory", "143771"}, {"gpu.family", "hopper"},
                 {"gpu.compute.major", "9"}, {"gpu.compute.minor", "0"}, {"mig.capable", "true"},
                 {"mps.capable", "false"}, {"cuda.driver-version.full", "580.95.05"},
                 {"cuda.runtime-version.full", "13.0"}},
                "h200");
  EXPECT_FALSE(own.count("gpu.count")) << "GFD's names moved to nvidia.com/";
  EXPECT_EQ(own["torch.wheel"], "2.14.0-cu130") << "gpuenv's own stay under gpuenv.dev/";
}

TEST(GfdLabelsCli, OneProfileAsExpectedOutputMigSingle) {
  ScratchDir dir;
  ProcessResult r = labels("a100_mig", dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Labels got = nvidia_labels(r.out);
  EXPECT_EQ(keys(got), expected_keys("single")) << r.out;
  expect_values(got,
                with(kDriver570, {{"mig.strategy", "single"},
                                  {"gpu.product", "NVIDIA-A100-SXM4-80GB-MIG-2g.20gb"},
                                  {"gpu.count", "3"},
                                  {"gpu.replicas", "1"},
                                  {"gpu.sharing-strategy", "none"},
                                  {"gpu.memory", "19968"},
                                  {"gpu.family", "ampere"},
                                  {"gpu.compute.major", "8"},
                                  {"gpu.compute.minor", "0"},
                                  {"gpu.multiprocessors", "28"},
                                  {"gpu.slices.gi", "2"},
                                  {"gpu.slices.ci", "2"},
                                  {"gpu.engines.copy", "2"},
                                  {"gpu.engines.decoder", "1"},
                                  {"gpu.engines.encoder", "0"},
                                  {"gpu.engines.jpeg", "0"},
                                  {"gpu.engines.ofa", "0"},
                                  {"mig.capable", "true"},
                                  {"mps.capable", "false"}}),
                "a100_mig");
}

TEST(GfdLabelsCli, ThreeProfilesAsExpectedOutputMigMixed) {
  ScratchDir dir;
  ProcessResult r = labels("a100_mig_mixed", dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Labels got = nvidia_labels(r.out);
  EXPECT_EQ(keys(got), expected_keys("mixed", {"2g.20gb", "3g.40gb", "7g.80gb"})) << r.out;
  expect_values(got,
                with(kDriver570, {{"mig.strategy", "mixed"},
                                  {"gpu.product", "NVIDIA-A100-SXM4-80GB"},
                                  {"gpu.count", "2"},
                                  {"gpu.replicas", "0"},
                                  {"gpu.memory", "81920"},
                                  {"mig-2g.20gb.count", "2"},
                                  {"mig-2g.20gb.product", "NVIDIA-A100-SXM4-80GB-MIG-2g.20gb"},
                                  {"mig-2g.20gb.memory", "19968"},
                                  {"mig-3g.40gb.count", "1"},
                                  {"mig-3g.40gb.multiprocessors", "42"},
                                  {"mig-7g.80gb.count", "1"},
                                  {"mig-7g.80gb.replicas", "1"},
                                  {"mig-7g.80gb.sharing-strategy", "none"},
                                  {"mig-7g.80gb.memory", "81152"},
                                  {"mig-7g.80gb.engines.jpeg", "1"},
                                  {"mig-7g.80gb.engines.ofa", "1"}}),
                "a100_mig_mixed");
}

// Two models: the first GPU's, and only its count (GFD's random one, fixed).
TEST(GfdLabelsCli, MixedModelsDescribeTheFirst) {
  ScratchDir dir;
  ProcessResult r = labels("rtx3090_4090", dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Labels got = nvidia_labels(r.out);
  EXPECT_EQ(keys(got), expected_keys("none")) << r.out;
  expect_values(got, {{"gpu.product", "NVIDIA-GeForce-RTX-3090"}, {"gpu.count", "1"}, {"gpu.family", "ampere"},
                      {"gpu.compute.minor", "6"}, {"mig.capable", "false"}},
                "rtx3090_4090");
}

TEST(GfdLabelsCli, TheDevicePluginsConfigSetsTheStrategyAndTheSharing) {
  ScratchDir dir;
  std::string config = dir.path() + "/config.yaml";
  write(config,
        "version: v1\nflags:\n  migStrategy: mixed\nsharing:\n  timeSlicing:\n    resources:\n"
        "    - name: nvidia.com/mig-2g.20gb\n      replicas: 4\n");
  ProcessResult r = labels("a100_mig", dir.path(), {"--device-plugin-config", config});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Labels got = nvidia_labels(r.out);
  EXPECT_EQ(got["mig.strategy"], "mixed") << r.out;
  EXPECT_EQ(got["mig-2g.20gb.replicas"], "4") << r.out;
  EXPECT_EQ(got["mig-2g.20gb.sharing-strategy"], "time-slicing") << r.out;
  EXPECT_EQ(got["mig-2g.20gb.product"], "NVIDIA-A100-SXM4-80GB-MIG-2g.20gb-SHARED") << r.out;
  write(config, "version: v1\nsharing:\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n");
  got = nvidia_labels(labels("h200", dir.path(), {"--device-plugin-config", config}).out);
  EXPECT_EQ(got["gpu.sharing-strategy"], "mps");
  EXPECT_EQ(got["mps.capable"], "true");
  EXPECT_EQ(got["gpu.product"], "NVIDIA-H200-SHARED");
}

TEST(GfdLabelsCli, ABadConfigExits3AndAConfigAloneExits2) {
  ScratchDir dir;
  std::string config = dir.path() + "/config.yaml";
  write(config, "version: v1\nflags:\n  migStrategy: both\n");
  ProcessResult r = labels("h200", dir.path(), {"--device-plugin-config", config});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("--device-plugin-config " + config + ": flags.migStrategy: both is not none, single or mixed"),
            std::string::npos)
      << r.err;
  r = run_gpuenv({"labels", "--once", "--output", "-", "--device-plugin-config", config});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--device-plugin-config goes only with --namespace nvidia.com"), std::string::npos) << r.err;
  EXPECT_EQ(run_gpuenv({"labels", "--once", "--namespace", "nvidia.org"}).exit_code, 2);
}

// GFD's file in features.d: NFD would let gpuenv's file (read after "gfd")
// override GFD's values, so gpuenv leaves nvidia.com/ alone and says so.
TEST(GfdLabelsCli, AGfdFileBesideItKeepsNvidiaComForGfd) {
  ScratchDir dir;
  write(dir.path() + "/gfd", "nvidia.com/gpu.count=1\n");
  ProcessResult r = labels("h200", dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Labels own;
  EXPECT_TRUE(nvidia_labels(r.out, &own).empty()) << r.out;
  EXPECT_EQ(own["doctor"].empty(), false) << r.out;
  EXPECT_NE(r.err.find(dir.path() + "/gfd is GPU Feature Discovery's"), std::string::npos) << r.err;
}

// ---- docs/cluster.md ----------------------------------------------------------

const std::vector<std::string> kProfiles = {"h200", "a100-mig", "a100x2-mig-mixed", "rtx3090-rtx4090"};

// label -> value per profile ("—" where not written), as the binary writes them.
std::map<std::string, std::vector<std::string>> generated_table() {
  std::map<std::string, std::vector<std::string>> out;
  for (std::size_t i = 0; i < kProfiles.size(); ++i) {
    ProcessResult r = run_gpuenv({"labels", "--json", "--namespace", "nvidia.com", "--machine",
                                  test_paths::tests_dir() + "/machines/" + kProfiles[i] + ".json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    if (!j.is_object()) continue;
    for (const auto& [name, value] : j["labels"].items()) {
      if (name.rfind("nvidia.com/", 0) != 0) continue;
      auto& row = out[name.substr(11)];
      row.resize(kProfiles.size(), "—");
      row[i] = value.get<std::string>().empty() ? "\"\"" : "`" + value.get<std::string>() + "`";
    }
  }
  return out;
}

std::string markdown(const std::map<std::string, std::vector<std::string>>& table) {
  std::string s = "| label |";
  for (const auto& p : kProfiles) s += " " + p + " |";
  s += "\n|---|---|---|---|---|\n";
  for (const auto& [name, values] : table) {
    s += "| `" + name + "` |";
    for (const auto& v : values) s += " " + v + " |";
    s += "\n";
  }
  return s;
}

TEST(GfdLabelsDoc, TheTableByProfileIsWhatTheBinaryWrites) {
  std::string doc = slurp(test_paths::tests_dir() + "/../docs/cluster.md");
  std::string want = markdown(generated_table());
  std::size_t at = doc.find(want.substr(0, want.find('\n') + 1));
  ASSERT_NE(at, std::string::npos) << "docs/cluster.md lacks the table; it should read:\n" << want;
  std::size_t end = doc.find("\n\n", at);
  EXPECT_EQ(doc.substr(at, end - at + 1), want) << "docs/cluster.md's table differs; it should read:\n" << want;
}

// Issue 39 item 12: nvidia.com/gpu.present is the GPU Operator's (and a
// label users set by hand for the device plugin's Helm chart), not GFD's.
TEST(GfdLabelsDoc, GpuPresentIsNotCalledAGfdLabel) {
  for (const char* file : {"/docs/cluster.md", "/deploy/kubernetes/daemonset.yaml"}) {
    std::istringstream in(slurp(test_paths::tests_dir() + "/.." + file));
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      if (line.find("gpu.present") == std::string::npos) continue;
      bool gfd = line.find("GFD") != std::string::npos || line.find("Feature Discovery") != std::string::npos;
      EXPECT_TRUE(!gfd || line.find("not") != std::string::npos)
          << file << ":" << n << " calls nvidia.com/gpu.present GFD's: " << line;
    }
  }
}

}  // namespace
}  // namespace gpuenv::testing
