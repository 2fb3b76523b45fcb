#include "model/measurement_json.h"

#include "model/json_opt.h"
#include "model/json_strict.h"

namespace gpuenv {
namespace {

using nlohmann::json;

struct Field {
  const json& j;
  std::string path;
};

bool get_string(const Field& f, bool required, std::string* v, std::string* err) {
  if (f.j.is_null()) return required ? json_fail(f.path, "missing", err) : true;
  if (!f.j.is_string()) return json_fail(f.path, std::string("expected a string, got ") + f.j.type_name(), err);
  *v = f.j.get<std::string>();
  return true;
}

bool get_opt_string(const Field& f, std::optional<std::string>* v, std::string* err) {
  if (f.j.is_null()) return true;
  std::string s;
  if (!get_string(f, true, &s, err)) return false;
  *v = s;
  return true;
}

bool get_opt_number(const Field& f, std::optional<double>* v, std::string* err) {
  if (f.j.is_null()) return true;
  if (!f.j.is_number()) return json_fail(f.path, std::string("expected a number, got ") + f.j.type_name(), err);
  *v = f.j.get<double>();
  return true;
}

Field field(const json& e, const std::string& path, const char* key) {
  static const json kNull;
  auto it = e.find(key);
  return {it == e.end() ? kNull : *it, path + "." + key};
}

bool read_one(const json& e, const std::string& path, Measurement* m, std::string* err) {
  if (!e.is_object()) return json_fail(path, std::string("expected an object, got ") + e.type_name(), err);
  return get_string(field(e, path, "key"), true, &m->key, err) &&
         get_string(field(e, path, "gpu_uuid"), false, &m->gpu_uuid, err) &&
         get_opt_string(field(e, path, "peer_uuid"), &m->peer_uuid, err) &&
         get_opt_number(field(e, path, "value"), &m->value, err) &&
         get_string(field(e, path, "unit"), false, &m->unit, err) &&
         get_opt_number(field(e, path, "peak"), &m->peak, err) &&
         get_string(field(e, path, "status"), false, &m->status, err) &&
         get_string(field(e, path, "detail"), false, &m->detail, err) &&
         get_string(field(e, path, "measured_at"), false, &m->measured_at, err) &&
         get_opt_string(field(e, path, "gpuenv_version"), &m->gpuenv_version, err);
}

}  // namespace

json measurement_json(const Measurement& m) {
  return {{"key", m.key},
          {"gpu_uuid", m.gpu_uuid},
          {"peer_uuid", opt(m.peer_uuid)},
          {"value", opt(m.value)},
          {"unit", m.unit},
          {"peak", opt(m.peak)},
          {"status", m.status},
          {"detail", m.detail},
          {"measured_at", m.measured_at},
          {"gpuenv_version", opt(m.gpuenv_version)}};
}

void measurements_to_json(const std::vector<Measurement>& ms, json* doc) {
  if (ms.empty()) return;
  json a = json::array();
  for (const auto& m : ms) a.push_back(measurement_json(m));
  (*doc)["measurements"] = std::move(a);
}

bool measurements_from_json(const json& doc, std::vector<Measurement>* out, std::string* err) {
  if (!doc.is_object()) return true;
  auto it = doc.find("measurements");
  if (it == doc.end() || it->is_null()) return true;
  if (!it->is_array()) return json_fail("measurements", std::string("expected an array, got ") + it->type_name(), err);
  for (size_t i = 0; i < it->size(); ++i) {
    Measurement m;
    if (!read_one((*it)[i], "measurements[" + std::to_string(i) + "]", &m, err)) return false;
    out->push_back(std::move(m));
  }
  return true;
}

}  // namespace gpuenv
