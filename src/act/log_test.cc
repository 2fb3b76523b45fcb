#include "act/log.h"

#include <gtest/gtest.h>

#include "act/render/printable.h"

namespace gpuenv {
namespace {

using nlohmann::json;

TEST(Log, ParsesTheTwoFormats) {
  LogFormat f = LogFormat::kText;
  EXPECT_TRUE(parse_log_format("json", &f));
  EXPECT_EQ(f, LogFormat::kJson);
  EXPECT_TRUE(parse_log_format("text", &f));
  EXPECT_EQ(f, LogFormat::kText);
  EXPECT_FALSE(parse_log_format("JSON", &f));
  EXPECT_FALSE(parse_log_format("", &f));
  EXPECT_EQ(f, LogFormat::kText);
}

// Each form's text line: init's banner, the CLI's "gpuenv: " lines, and
// text laid out already.
TEST(Log, TextForms) {
  using F = LogEvent::Form;
  EXPECT_EQ(render_event({Severity::kInfo, "gpu", "  GPU 0", {}, F::kBanner}, LogFormat::kText, "t"), "  GPU 0\n");
  EXPECT_EQ(render_event({Severity::kWarning, "x", "w", {}, F::kBanner}, LogFormat::kText, "t"),
            "gpuenv: warning: w\n");
  EXPECT_EQ(render_event({Severity::kError, "x", "e", {}, F::kLine}, LogFormat::kText, "t"), "gpuenv: e\n");
  EXPECT_EQ(render_event({Severity::kInfo, "x", "i", {}, F::kLine}, LogFormat::kText, "t"), "gpuenv: i\n");
  EXPECT_EQ(render_event({Severity::kWarning, "x", "a\n  b\n", {}, F::kVerbatim}, LogFormat::kText, "t"),
            "a\n  b\n");
  EXPECT_EQ(render_event({Severity::kInfo, "x", "", {}, F::kLine}, LogFormat::kText, "t"), "");
}

TEST(Log, JsonPutsTimeLevelMsgCommandFirst) {
  LogEvent e{Severity::kWarning, "skipped", "ignored in JSON", {{"name", "A"}}, LogEvent::Form::kLine};
  std::string line = render_event(e, LogFormat::kJson, "2026-01-02T03:04:05.006Z", "env");
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line, R"({"time":"2026-01-02T03:04:05.006Z","level":"warning","msg":"skipped","command":"env","name":"A"})"
                  "\n");
  // Without a command (init's unit tests, before the CLI knows it): no field.
  EXPECT_FALSE(json::parse(render_event(e, LogFormat::kJson, "t")).contains("command"));
}

// Quotes, newlines, control characters and bytes that are not UTF-8 still
// give one valid JSON line.
TEST(Log, HostileTextIsOneValidJsonLine) {
  std::string nasty = "a\"b\\c\nd\re\x01\x1b[31mf\xff\xfe g\xc3";
  LogEvent e{Severity::kError, "error", nasty, {{"message", nasty}, {nasty, nasty}}, LogEvent::Form::kLine};
  std::string line = render_event(e, LogFormat::kJson, "t", "detect");
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
  json j = json::parse(line);  // throws on invalid JSON or UTF-8
  EXPECT_EQ(j["level"], "error");
  std::string m = j["message"];
  EXPECT_EQ(m.substr(0, 7), "a\"b\\c\nd");
  EXPECT_NE(m.find("\xEF\xBF\xBD"), std::string::npos);  // U+FFFD for the bad bytes
}

// log_message: the one call for a command's message. Text "gpuenv: TEXT"
// (sanitised; a warning says so); JSON carries TEXT raw as "message".
TEST(Log, LogMessageWritesStderrInTheConfiguredFormat) {
  for (LogFormat format : {LogFormat::kText, LogFormat::kJson}) {
    configure_log(format, "explain");
    ::testing::internal::CaptureStderr();
    log_message(Severity::kWarning, "skipped", "X left\x1b out", {{"name", "X"}});
    print_error("no such\nfile");
    std::string err = ::testing::internal::GetCapturedStderr();
    if (format == LogFormat::kText) {
      EXPECT_EQ(err, "gpuenv: warning: X left\\x1b out\ngpuenv: no such\\x0afile\n");
      continue;
    }
    auto nl = err.find('\n');
    json a = json::parse(err.substr(0, nl)), b = json::parse(err.substr(nl + 1));
    EXPECT_EQ(a["msg"], "skipped");
    EXPECT_EQ(a["level"], "warning");
    EXPECT_EQ(a["command"], "explain");
    EXPECT_EQ(a["name"], "X");
    EXPECT_EQ(a["message"], "X left\x1b out");
    EXPECT_EQ(b["msg"], "error");
    EXPECT_EQ(b["level"], "error");
    EXPECT_EQ(b["message"], "no such\nfile");
  }
  configure_log(LogFormat::kText, "");
}

TEST(Log, WithoutAllocatingIsValidJsonToo) {
  configure_log(LogFormat::kJson, "inspect");
  ::testing::internal::CaptureStderr();
  log_without_allocating("out of memory", "out of memory (an allocation failed)");
  std::string err = ::testing::internal::GetCapturedStderr();
  configure_log(LogFormat::kText, "");
  json j = json::parse(err);
  EXPECT_EQ(j["msg"], "out of memory");
  EXPECT_EQ(j["command"], "inspect");
  EXPECT_EQ(j["level"], "error");
  ::testing::internal::CaptureStderr();
  log_without_allocating("out of memory", "out of memory (an allocation failed)");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "gpuenv: out of memory (an allocation failed)\n");
}

// Issue 21: text mode escapes C1 controls (CSI U+009B); JSON lines did not.
TEST(Log, JsonEscapesC1ControlsAndDel) {
  std::string csi = "a\xc2\x9b" "2Jb\x7f\xc2\x85";
  LogEvent e{Severity::kError, "error", csi, {{"message", csi}, {csi, csi}}, LogEvent::Form::kLine};
  std::string line = render_event(e, LogFormat::kJson, "t", "detect");
  EXPECT_EQ(line.find("\xc2\x9b"), std::string::npos) << line;
  EXPECT_EQ(line.find('\x7f'), std::string::npos) << line;
  EXPECT_NE(line.find(R"("message":"a\u009b2Jb\u007f\u0085")"), std::string::npos) << line;
  json j = json::parse(line);
  EXPECT_EQ(j["message"], csi);  // a JSON reader gets the text back
  EXPECT_EQ(j[csi], csi);
  // Other characters beyond ASCII stay as they are.
  EXPECT_NE(render_event({Severity::kInfo, "x", "", {{"m", "\xc2\xa0\xe2\x82\xac"}}}, LogFormat::kJson, "t")
                .find("\xc2\xa0\xe2\x82\xac"),
            std::string::npos);
}

// Text mode sanitises every form, whoever built the text; text already made
// printable comes out the same.
TEST(Log, TextModeSanitisesEveryForm) {
  using F = LogEvent::Form;
  std::string raw = "a\nb\x1b[2J\xc2\x9b";
  EXPECT_EQ(render_event({Severity::kInfo, "x", raw, {}, F::kBanner}, LogFormat::kText, "t"), "a\\x0ab\\x1b[2J\\u009b\n");
  EXPECT_EQ(render_event({Severity::kError, "x", raw, {}, F::kLine}, LogFormat::kText, "t"),
            "gpuenv: a\\x0ab\\x1b[2J\\u009b\n");
  EXPECT_EQ(render_event({Severity::kWarning, "x", raw + "\n", {}, F::kVerbatim}, LogFormat::kText, "t"),
            "a\nb\\x1b[2J\\u009b\n");
  EXPECT_EQ(render_event({Severity::kError, "x", printable(raw), {}, F::kLine}, LogFormat::kText, "t"),
            "gpuenv: a\\x0ab\\x1b[2J\\u009b\n");
}

}  // namespace
}  // namespace gpuenv
