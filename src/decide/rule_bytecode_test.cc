#include <gtest/gtest.h>

#include "decide/decide.h"
#include "decide/rule_test_support.h"
#include "decide/rules.h"

namespace gpuenv {
namespace {

using namespace gpuenv::testing;

Machine with_torch(std::optional<bool> bytecode_cached) {
  Machine m = machine::h200(1);
  Torch t;
  t.version = "2.11.0+cu130";
  t.cuda_version = "13.0";
  t.path = "/opt/venv/lib/python3.12/site-packages/torch";
  t.bytecode_cached = bytecode_cached;
  m.torch = t;
  return m;
}

struct Row {
  std::string description;
  Machine machine;
  Env env;
  std::string cache_root;
  Env expected;
};

std::vector<Row> rows() {
  const Env prefix = {{"PYTHONPYCACHEPREFIX", "/cache/python"}};
  Env both = prefix;
  both["PYTHONDONTWRITEBYTECODE"] = "";
  return {
      {"torch ships bytecode: nothing to do", with_torch(true), {}, "/cache", {}},
      {"not known whether it does: nothing", with_torch(std::nullopt), {}, "/cache", {}},
      {"no torch at all", machine::h200(1), {}, "/cache", {}},
      {"no bytecode: cache it under the root", with_torch(false), {}, "/cache/", prefix},
      {"the image forbids writing bytecode", with_torch(false),
       {{"PYTHONDONTWRITEBYTECODE", "1"}}, "/cache", both},
      {"an empty PYTHONDONTWRITEBYTECODE already allows it", with_torch(false),
       {{"PYTHONDONTWRITEBYTECODE", ""}}, "/cache", prefix},
      {"no cache root: nothing", with_torch(false), {}, "", {}},
      {"no GPU: still worth it", [] {
         Machine m = with_torch(false);
         m.gpus.clear();
         return m;
       }(), {}, "/cache", prefix},
  };
}

TEST(RuleBytecode, Table) {
  for (const auto& row : rows()) {
    SCOPED_TRACE(row.description);
    Options o = options_for(row.machine, row.env);
    o.cache_root = row.cache_root;
    EXPECT_EQ(settings_of(rule_bytecode(row.machine, o)), row.expected);
  }
}

TEST(RuleBytecode, ReasonNamesTheInstall) {
  Options o = options_for(Machine{});
  o.cache_root = "/cache";
  Decision d = rule_bytecode(with_torch(false), o);
  ASSERT_EQ(d.settings.size(), 1u);
  EXPECT_NE(d.settings[0].reason.find("/opt/venv/lib/python3.12/site-packages/torch"),
            std::string::npos);
}

// The image's PYTHONDONTWRITEBYTECODE=1 is replaced, and the plan says whose
// value it was; a PYTHONPYCACHEPREFIX the user chose is kept.
TEST(RuleBytecode, ThroughDecide) {
  Machine m = with_torch(false);
  Options o = options_for(m, {{"PYTHONDONTWRITEBYTECODE", "1"},
                              {"PYTHONPYCACHEPREFIX", "/mine"}});
  o.cache_root = "/cache";
  Plan plan = decide(m, o);
  const Setting* write = plan.find("PYTHONDONTWRITEBYTECODE");
  ASSERT_NE(write, nullptr);
  EXPECT_EQ(write->value, "");
  EXPECT_EQ(write->origin, Origin::kDecided);
  EXPECT_NE(write->reason.find("replaces the container image's PYTHONDONTWRITEBYTECODE=1"),
            std::string::npos)
      << write->reason;
  const Setting* prefix = plan.find("PYTHONPYCACHEPREFIX");
  ASSERT_NE(prefix, nullptr);
  EXPECT_EQ(prefix->value, "/mine");
  EXPECT_EQ(prefix->origin, Origin::kKept);
}

}  // namespace
}  // namespace gpuenv
