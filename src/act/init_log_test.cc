#include "act/init_log.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

Machine one_h100() {
  Machine m;
  m.nvidia.driver_version = "580.95.05";
  m.nvidia.cuda_driver_version = 13000;
  Gpu g;
  g.name = "NVIDIA H100 80GB HBM3";
  g.compute_capability = ComputeCapability{9, 0};
  g.memory_total_bytes = 80ull << 30;
  m.gpus.push_back(g);
  return m;
}

Plan plan_with_notes() {
  Plan p;
  Setting s;
  s.name = "TORCH_CUDA_ARCH_LIST";
  s.value = "9.0";
  s.rule = "arch_list";
  s.reason = "the visible GPUs";
  p.settings.push_back(s);
  p.notes = {{Severity::kInfo, "nccl", "quiet"}, {Severity::kWarning, "cpu", "loud"},
             {Severity::kError, "mig", "louder"}};
  return p;
}

std::vector<std::string> msgs(const std::vector<LogEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.msg);
  return out;
}

TEST(InitLog, BannerHasGpusSettingsAndOnlyLoudNotes) {
  auto events = banner_events(one_h100(), plan_with_notes());
  EXPECT_EQ(msgs(events), (std::vector<std::string>{"machine", "gpu", "setting", "note", "note"}));
  EXPECT_EQ(events[0].text, std::string("gpuenv ") + GPUENV_VERSION + ": 1 GPU, driver 580.95.05 (CUDA 13.0)");
  EXPECT_EQ(events[1].text, "  GPU 0  NVIDIA H100 80GB HBM3  cc 9.0 (Hopper)  80.0 GiB");
  EXPECT_EQ(events[2].text, "  TORCH_CUDA_ARCH_LIST=9.0");
  EXPECT_EQ(events[3].level, Severity::kWarning);
  EXPECT_EQ(events[4].level, Severity::kError);
}

TEST(InitLog, NoGpuWarnsOfCpuModeWithTheReason) {
  Machine m;
  m.nvidia.problems.push_back({"nvml", "nvml_library_not_found", "cannot load NVML", "install the driver"});
  auto events = banner_events(m, Plan{});
  ASSERT_EQ(msgs(events), (std::vector<std::string>{"machine", "cpu mode"}));
  EXPECT_EQ(events[1].level, Severity::kWarning);
  EXPECT_EQ(render_event(events[1], LogFormat::kText, "t"),
            "gpuenv: warning: no NVIDIA GPU: running in CPU mode (cannot load NVML); install the driver\n");
}

TEST(InitLog, NoGpuInAContainerWithoutDevicesSaysGpusAll) {
  Machine m;
  m.host.container = "docker";
  auto events = banner_events(m, Plan{});
  EXPECT_NE(events[1].text.find("docker run --gpus all"), std::string::npos) << events[1].text;
}

TEST(InitLog, JsonLineHasTimeLevelMsgThenFields) {
  auto events = banner_events(one_h100(), plan_with_notes());
  std::string line = render_event(events[2], LogFormat::kJson, "2026-01-02T03:04:05.006Z");
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // one line
  auto j = nlohmann::ordered_json::parse(line);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"time", "level", "msg", "name", "value", "origin", "rule", "reason"}));
  EXPECT_EQ(j["time"], "2026-01-02T03:04:05.006Z");
  EXPECT_EQ(j["level"], "info");
  EXPECT_EQ(j["value"], "9.0");
}

TEST(InitLog, TextModeSkipsQuietEvents) {
  EXPECT_EQ(render_event(wrote_event("/etc/gpuenv/env"), LogFormat::kText, "t"), "");
  EXPECT_EQ(render_event(starting_event({"sh"}), LogFormat::kText, "t"), "");
  ChildExit killed{true, 143, SIGTERM};
  EXPECT_EQ(render_event(exited_event(killed), LogFormat::kText, "t"),
            "gpuenv: warning: the command was ended by SIGTERM\n");
  auto j = nlohmann::json::parse(render_event(exited_event({true, 3, 0}), LogFormat::kJson, "t"));
  EXPECT_EQ(j["code"], 3);
  EXPECT_FALSE(j.contains("signal"));
}

TEST(InitLog, ValuesAreMadePrintableInTextButKeptInJson) {
  Plan p;
  Setting s;
  s.name = "X";
  s.value = "a\x1b[31mb";
  s.origin = Origin::kKept;
  s.user_value = "u";
  p.settings.push_back(s);
  auto events = banner_events(Machine{}, p);
  const LogEvent& e = events.back();
  EXPECT_EQ(e.text.find('\x1b'), std::string::npos) << e.text;
  EXPECT_NE(e.text.find("(yours, kept)"), std::string::npos);
  EXPECT_EQ(e.fields["value"], "a\x1b[31mb");
}

// Issue 35: init's error text (GPUENV_USER=$'a\nb\x1b[31m\xc2\x9b' names no user) reached
// the terminal raw: a newline, ESC and CSI. Every event's text is sanitised
// where it is rendered, in both formats.
TEST(InitLog, ErrorTextCarriesNoRawControls) {
  std::string user = "a\nb\x1b[31m\xc2\x9b\x7f";
  for (const LogEvent& e : {error_event("no user " + user), write_failed_event("/etc/" + user, user),
                            skipped_event("/etc/" + user, user)})
    for (LogFormat f : {LogFormat::kText, LogFormat::kJson}) {
      std::string out = render_event(e, f, "t", "init");
      ASSERT_FALSE(out.empty());
      EXPECT_EQ(out.find('\n'), out.size() - 1) << out;  // one line
      EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
      EXPECT_EQ(out.find('\x7f'), std::string::npos) << out;
      EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos) << out;
    }
  EXPECT_EQ(render_event(error_event("no user " + user), LogFormat::kText, "t"),
            "gpuenv: error: no user a\\x0ab\\x1b[31m\\u009b\\x7f\n");
}

TEST(InitLog, ParseLogFormat) {
  LogFormat f;
  EXPECT_TRUE(parse_log_format("json", &f));
  EXPECT_EQ(f, LogFormat::kJson);
  EXPECT_TRUE(parse_log_format("text", &f));
  EXPECT_EQ(f, LogFormat::kText);
  EXPECT_FALSE(parse_log_format("yaml", &f));
}

TEST(InitLog, Rfc3339Now) {
  std::string t = utc_now_ms();
  ASSERT_EQ(t.size(), 24u) << t;
  EXPECT_EQ(t[4], '-');
  EXPECT_EQ(t[10], 'T');
  EXPECT_EQ(t[19], '.');
  EXPECT_EQ(t.back(), 'Z');
}

}  // namespace
}  // namespace gpuenv
