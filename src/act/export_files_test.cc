#include "act/export_files.h"

#include <gtest/gtest.h>

#include "process.h"

namespace gpuenv {
namespace {

using testing::write_temp_file;

const char* kHash = "$2y$10$Kq3vN8zR1wT5yB7dF9hJ2epBpmxcytG5OiQhijbTHeCsGmyWfc3EC";

TEST(DcgmCounters, LoadNamesTheFile) {
  std::vector<DcgmCounter> out;
  std::string err;
  EXPECT_FALSE(load_dcgm_counters("/nonexistent/counters.csv", &out, &err));
  EXPECT_EQ(err.rfind("-f /nonexistent/counters.csv: ", 0), 0u) << err;
}

// The file's text goes through parse_dcgm_counters: its counters, or its
// line's error after the flag and the file, with the format it wants.
TEST(DcgmCounters, LoadParsesTheFilesText) {
  std::string path = write_temp_file("counters.csv", "# c\nDCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature\n");
  std::vector<DcgmCounter> out;
  std::string err;
  ASSERT_TRUE(load_dcgm_counters(path, &out, &err)) << err;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].field, "DCGM_FI_DEV_GPU_TEMP");
  EXPECT_EQ(out[0].line, 2);

  std::string bad = write_temp_file("counters.csv", "DCGM_FI_DEV_GPU_TEMP, gauge\n");
  EXPECT_FALSE(load_dcgm_counters(bad, &out, &err));
  EXPECT_EQ(err, "-f " + bad +
                     ": line 1: 2 fields, want 3: FIELD, TYPE, HELP (dcgm-exporter's counters CSV: `FIELD, TYPE, "
                     "HELP` a line, # comments)");
}

TEST(DcgmCounters, LoadRefusesAFileOverOneMebibyte) {
  std::string path = write_temp_file("counters.csv", std::string((1 << 20) + 1, '#'));
  std::vector<DcgmCounter> out;
  std::string err;
  EXPECT_FALSE(load_dcgm_counters(path, &out, &err));
  EXPECT_EQ(err, "-f " + path + ": larger than 1 MiB; is it a counters CSV?");
}

TEST(WebConfig, LoadNamesTheFile) {
  WebConfig c;
  std::string err;
  EXPECT_FALSE(load_web_config("/nonexistent/web.yml", &c, &err));
  EXPECT_EQ(err.rfind("--web-config-file /nonexistent/web.yml: ", 0), 0u) << err;
}

// The file's text goes through parse_web_config with the file's directory,
// so relative paths in it are taken from there.
TEST(WebConfig, LoadTakesRelativePathsFromTheFilesDirectory) {
  std::string path = write_temp_file("web.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: /k/server.key\n"
                                                "basic_auth_users:\n  prometheus: " + std::string(kHash) + "\n");
  std::string dir = path.substr(0, path.rfind('/'));
  WebConfig c;
  std::string err;
  ASSERT_TRUE(load_web_config(path, &c, &err)) << err;
  ASSERT_TRUE(c.tls);
  EXPECT_EQ(c.tls->cert_file, dir + "/server.crt");
  EXPECT_EQ(c.tls->key_file, "/k/server.key");
  EXPECT_EQ(c.users.size(), 1u);

  std::string bad = write_temp_file("web.yml", "- a\n");
  EXPECT_FALSE(load_web_config(bad, &c, &err));
  EXPECT_EQ(err, "--web-config-file " + bad + ": the file must be a mapping");
}

}  // namespace
}  // namespace gpuenv
