#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sense/sense.h"

namespace gpuenv {
namespace {

class BaseImageEnv : public ::testing::Test {
 protected:
  BaseImageEnv() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpuenv-base-env-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
  }
  ~BaseImageEnv() override { std::filesystem::remove_all(dir_); }
  std::string file(const std::string& name, const std::string& bytes) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string dir_;
};

TEST_F(BaseImageEnv, KeepsTheSteeringNamesOfEnvDashZero) {
  using namespace std::string_literals;
  auto env = read_base_image_env(file("env0",
                                      "PATH=/opt/conda/bin:/usr/bin\0TORCH_CUDA_ARCH_LIST=5.2 6.0 7.0 8.0 9.0+PTX\0"
                                      "NOEQUALS\0PYTHONPATH=\0SECRET_TOKEN=x\0"s));
  EXPECT_EQ(env.size(), 2u);
  EXPECT_EQ(env.at("TORCH_CUDA_ARCH_LIST"), "5.2 6.0 7.0 8.0 9.0+PTX");
  EXPECT_EQ(env.at("PYTHONPATH"), "");
}

TEST_F(BaseImageEnv, NoFileOrAnOversizedOneIsNone) {
  EXPECT_TRUE(read_base_image_env("").empty());
  EXPECT_TRUE(read_base_image_env(dir_ + "/missing").empty());
  std::string big = "TORCH_CUDA_ARCH_LIST=9.0" + std::string(1, '\0') + std::string(1 << 20, 'x');
  EXPECT_TRUE(read_base_image_env(file("big", big)).empty());
}

}  // namespace
}  // namespace gpuenv
