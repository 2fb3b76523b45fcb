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

}  // namespace
}  // namespace gpuenv
