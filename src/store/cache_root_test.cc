#include "store/cache_root.h"

#include <gtest/gtest.h>

#include <map>

namespace gpuenv {
namespace {

Getenv env(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(CacheRoot, FlagThenGpuenvThenXdgThenHome) {
  auto all = env({{"GPUENV_CACHE_ROOT", "/g"}, {"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}});
  EXPECT_EQ(resolve_cache_root("/flag", all), "/flag");
  EXPECT_EQ(resolve_cache_root("", all), "/g");
  EXPECT_EQ(resolve_cache_root("", env({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}})), "/x/gpuenv");
  EXPECT_EQ(resolve_cache_root("", env({{"HOME", "/h"}})), "/h/.cache/gpuenv");
  EXPECT_EQ(resolve_cache_root("", env({})), "");
}

TEST(CacheRoot, EmptyVariablesCountAsUnset) {
  EXPECT_EQ(resolve_cache_root("", env({{"GPUENV_CACHE_ROOT", ""}, {"XDG_CACHE_HOME", ""}, {"HOME", "/h"}})),
            "/h/.cache/gpuenv");
}

TEST(CacheRoot, TheRemovedStoreVariableIsIgnored) {
  auto e = env({{"GPUENV_CACHE_DIR", "/old"}, {"HOME", "/h"}});
  EXPECT_EQ(resolve_cache_root("", e), "/h/.cache/gpuenv");
  EXPECT_EQ(store::path_in(resolve_cache_root("", e)), "/h/.cache/gpuenv/gpuenv.db");
}

TEST(CacheRoot, TheStoreLivesUnderTheRoot) {
  EXPECT_EQ(store::path_in("/cache"), "/cache/gpuenv.db");
  EXPECT_EQ(store::path_in("/cache/"), "/cache/gpuenv.db");
  EXPECT_EQ(store::path_in(""), "");
}

TEST(CacheRoot, DbFlagWinsOverTheRoot) {
  EXPECT_EQ(store::chosen_path("/tmp/x.db", "/cache"), "/tmp/x.db");
  EXPECT_EQ(store::chosen_path("", "/cache"), "/cache/gpuenv.db");
  EXPECT_EQ(store::chosen_path("", ""), "");
}

}  // namespace
}  // namespace gpuenv
