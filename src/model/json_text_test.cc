#include "model/json_text.h"

#include <gtest/gtest.h>

namespace gpuenv {
namespace {

TEST(JsonText, InvalidUtf8IsReplacedNotThrown) {
  nlohmann::json j = {{"path", std::string("/data/caf\xe9.bin")}};  // Latin-1, not UTF-8
  EXPECT_THROW(j.dump(), nlohmann::json::type_error);
  EXPECT_EQ(json_line(j), "{\"path\":\"/data/caf\xef\xbf\xbd.bin\"}");
  EXPECT_EQ(json_document(j), "{\n  \"path\": \"/data/caf\xef\xbf\xbd.bin\"\n}\n");
}

TEST(JsonText, DocumentsEndInANewlineAndKeepOrderedKeys) {
  nlohmann::ordered_json j;
  j["b"] = 1, j["a"] = nullptr;
  EXPECT_EQ(json_document(j), "{\n  \"b\": 1,\n  \"a\": null\n}\n");
  EXPECT_EQ(json_document(j, 0), "{\n\"b\": 1,\n\"a\": null\n}\n");
  EXPECT_EQ(json_line(j), "{\"b\":1,\"a\":null}");
}

TEST(JsonText, EscapesDelAndC1ControlsOnly) {
  EXPECT_EQ(json_escape_controls("\"a\xc2\x9b\x7f\xc2\xa0\""), "\"a\\u009b\\u007f\xc2\xa0\"");
  EXPECT_EQ(json_escape_controls("\"\xc2\x80\xc2\x9f\""), "\"\\u0080\\u009f\"");
}

// Every dump escapes them (stdout's --json documents as stderr's log lines),
// and a reader decodes the same string.
TEST(JsonText, DocumentsAndLinesCarryNoRawDelOrC1) {
  std::string hostile = "NVIDIA \x1b[31m\xc2\x9b" "31m\x7f\xc2\x85H100";
  nlohmann::ordered_json j = {{"name", hostile}};
  for (const std::string& out : {json_document(j), json_line(j)}) {
    EXPECT_EQ(out.find('\x7f'), std::string::npos) << out;
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
    EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos) << out;
    EXPECT_EQ(out.find("\xc2\x85"), std::string::npos) << out;
    EXPECT_EQ(nlohmann::json::parse(out)["name"], hostile);
  }
  EXPECT_EQ(json_line(j), "{\"name\":\"NVIDIA \\u001b[31m\\u009b31m\\u007f\\u0085H100\"}");
}

}  // namespace
}  // namespace gpuenv
