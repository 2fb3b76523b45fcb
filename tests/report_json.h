// `gpuenv report --json ARGS...` under the given options, parsed: what the
// watch and planned-peak tests read a job's record from.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "process.h"

namespace gpuenv::testing {

inline nlohmann::json report_json(const std::vector<std::string>& args, const ProcessOptions& o) {
  std::vector<std::string> all = {"report", "--json"};
  all.insert(all.end(), args.begin(), args.end());
  ProcessResult r = run_gpuenv(all, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

}  // namespace gpuenv::testing
