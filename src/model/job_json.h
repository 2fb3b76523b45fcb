// A Job's context and timeline as JSON: what the store keeps, what
// `gpuenv report --json` prints and what tests/timelines/*.json hold.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/job.h"

namespace gpuenv {

nlohmann::json timeline_to_json(const Timeline& t);
nlohmann::json context_to_json(const JobContext& c);

/// Read what *_to_json wrote; false with "timeline.points[3].util_pct: ..." in *err.
bool timeline_from_json(const nlohmann::json& j, Timeline* t, std::string* err);
bool context_from_json(const nlohmann::json& j, JobContext* c, std::string* err);

/// The hook's speed figures (JobSpeed); reading checks each range.
nlohmann::json speed_to_json(const JobSpeed& s);
bool speed_from_json(const nlohmann::json& j, JobSpeed* s, std::string* err);

/// The whole record (without the timeline when with_timeline is false).
nlohmann::json job_to_json(const Job& job, bool with_timeline);

}  // namespace gpuenv
