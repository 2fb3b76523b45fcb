#include "model/measurement_json.h"

#include <gtest/gtest.h>

#include "builders.h"
#include "model/snapshot.h"

namespace gpuenv {
namespace {

Measurement sample() {
  Measurement m;
  m.key = "p2p", m.gpu_uuid = "GPU-a", m.peer_uuid = "GPU-b", m.value = 21.5, m.unit = "GB/s";
  m.detail = "peer access", m.measured_at = "2025-01-01T00:00:00Z", m.gpuenv_version = "0.1.0";
  return m;
}

TEST(MeasuredSnapshot, RoundTripsThroughTheSnapshot) {
  Machine m = testing::machine::h100(2).with_nvlink();
  Measurement failed = sample();
  failed.key = "gemm_bf16_8192", failed.peer_uuid.reset(), failed.value.reset(), failed.peak = 989.4;
  failed.status = "failed";
  m.measurements = {sample(), failed};
  std::string text = machine_to_json(m);
  Machine back;
  std::string err;
  ASSERT_TRUE(machine_from_json(text, &back, &err)) << err;
  EXPECT_EQ(back, m);
}

TEST(MeasuredSnapshot, AbsentWhenNoneSoOldSnapshotsStayValid) {
  Machine m = testing::machine::h200();
  EXPECT_EQ(machine_to_json(m).find("measurements"), std::string::npos);
  Machine back;
  std::string err;
  ASSERT_TRUE(machine_from_json(R"({"schema_version": 1, "measurements": null})", &back, &err)) << err;
  EXPECT_TRUE(back.measurements.empty());
}

TEST(MeasuredSnapshot, MalformedEntriesNameTheField) {
  struct Row {
    const char* json;
    const char* error;
  } rows[] = {
      {R"({"schema_version": 1, "measurements": {}})", "measurements: expected an array, got object"},
      {R"({"schema_version": 1, "measurements": [1]})", "measurements[0]: expected an object, got number"},
      {R"({"schema_version": 1, "measurements": [{"unit": "x"}]})", "measurements[0].key: missing"},
      {R"({"schema_version": 1, "measurements": [{"key": "k", "value": "fast"}]})",
       "measurements[0].value: expected a number, got string"},
      {R"({"schema_version": 1, "measurements": [{"key": "k", "peer_uuid": 3}]})",
       "measurements[0].peer_uuid: expected a string, got number"},
  };
  for (const auto& r : rows) {
    Machine m;
    std::string err;
    EXPECT_FALSE(machine_from_json(r.json, &m, &err)) << r.json;
    EXPECT_NE(err.find(r.error), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace gpuenv
