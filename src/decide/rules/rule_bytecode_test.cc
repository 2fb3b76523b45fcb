#include <gtest/gtest.h>

#include "decide/decide.h"
#include "decide/rules/rules.h"
#include "rule_expect.h"

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

RuleCase bytecode_root(const std::string& cache_root, RuleCase c) {
  c.cache_root = cache_root;
  return c;
}

Machine without_gpus(Machine m) {
  m.gpus.clear();
  return m;
}

std::vector<RuleCase> bytecode_rows() {
  const Env prefix = {{"PYTHONPYCACHEPREFIX", "/cache/python"}};
  Env both = prefix;
  both["PYTHONDONTWRITEBYTECODE"] = "";
  return {
      {"torch ships bytecode: nothing to do", with_torch(true), {}, {}},
      {"not known whether it does: nothing", with_torch(std::nullopt), {}, {}},
      {"no torch at all", machine::h200(1), {}, {}},
      bytecode_root("/cache/", {"no bytecode: cache it under the root", with_torch(false), {}, prefix}),
      {"PYTHONDONTWRITEBYTECODE=1 forbids writing it", with_torch(false),
       {{"PYTHONDONTWRITEBYTECODE", "1"}}, both},
      {"an empty PYTHONDONTWRITEBYTECODE already allows it", with_torch(false),
       {{"PYTHONDONTWRITEBYTECODE", ""}}, prefix},
      bytecode_root("", {"no cache root: nothing", with_torch(false), {}, {}}),
      {"no GPU: still worth it", without_gpus(with_torch(false)), {}, prefix},
  };
}

TEST(RuleBytecode, Table) { run_table(rule_bytecode, bytecode_rows()); }

TEST(RuleBytecode, ReasonNamesTheInstall) {
  Decision d = rule_bytecode(with_torch(false), options_with({}));
  ASSERT_EQ(d.settings.size(), 1u);
  EXPECT_NE(d.settings[0].reason.find("/opt/venv/lib/python3.12/site-packages/torch"),
            std::string::npos);
}

// PYTHONDONTWRITEBYTECODE=1 in the environment is the user's like any
// other value: kept, and the plan says what gpuenv would set; --override
// replaces it. A PYTHONPYCACHEPREFIX the user chose is kept.
TEST(RuleBytecode, ThroughDecide) {
  Machine m = with_torch(false);
  for (bool override_user : {false, true}) {
    SCOPED_TRACE(override_user ? "--override" : "default");
    Options o = options_for(m, {{"PYTHONDONTWRITEBYTECODE", "1"}, {"PYTHONPYCACHEPREFIX", "/mine"}});
    o.override_user = override_user;
    Plan plan = decide(m, o);
    const Setting* write = plan.find("PYTHONDONTWRITEBYTECODE");
    ASSERT_NE(write, nullptr);
    EXPECT_EQ(write->value, override_user ? "" : "1");
    EXPECT_EQ(write->origin, override_user ? Origin::kOverridden : Origin::kKept);
    EXPECT_NE(write->reason.find(override_user
                                     ? "(replaces your PYTHONDONTWRITEBYTECODE=1, as --override asks)"
                                     : "kept yours; gpuenv would set it empty: an empty value lets Python write"),
              std::string::npos)
        << write->reason;
    EXPECT_EQ(write->reason.find("container image"), std::string::npos) << write->reason;
    const Setting* prefix = plan.find("PYTHONPYCACHEPREFIX");
    ASSERT_NE(prefix, nullptr);
    EXPECT_EQ(prefix->value, override_user ? "/cache/python" : "/mine");
  }
}

}  // namespace
}  // namespace gpuenv
