#include "act/render/doctor_report.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace gpuenv {
namespace {

const char* color_of(Status s) {
  switch (s) {
    case Status::kOk: return "\033[32m";
    case Status::kWarning: return "\033[33m";
    case Status::kError: return "\033[31m";
  }
  return "";
}

std::string paint(const Style& st, Status s, const std::string& text) {
  return st.color ? color_of(s) + text + "\033[0m" : text;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

int count(const std::vector<Finding>& fs, Status s) {
  return int(std::count_if(fs.begin(), fs.end(), [s](const Finding& f) { return f.status == s; }));
}

std::string plural(int n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

std::string report_text(const DoctorReport& r, const Style& style) {
  const std::vector<Finding>& findings = r.findings;
  std::vector<const Finding*> order;
  for (const auto& f : findings) order.push_back(&f);
  std::stable_sort(order.begin(), order.end(),
                   [](const Finding* a, const Finding* b) { return a->status > b->status; });
  size_t width = 0;
  for (const auto* f : order) width = std::max(width, f->check.size());
  int errors = count(findings, Status::kError), warnings = count(findings, Status::kWarning);
  std::string out = "gpuenv doctor: " + plural(errors, "error") + ", " +
                    plural(warnings, "warning") + ", " +
                    std::to_string(count(findings, Status::kOk)) + " ok\n\n";
  std::string indent(2 + 8 + width + 2, ' ');
  for (const auto* f : order) {
    out += "  " + paint(style, f->status, pad(status_name(f->status), 8)) + pad(f->check, width) +
           "  " + printable(f->seen) + "\n";
    if (!f->fix.empty()) out += indent + "fix: " + printable(f->fix) + "\n";
  }
  return out;
}

nlohmann::json report_json(const DoctorReport& r) {
  const std::vector<Finding>& findings = r.findings;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& f : findings)
    list.push_back({{"check", f.check},
                    {"status", status_name(f.status)},
                    {"seen", f.seen},
                    {"fix", f.fix.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.fix)}});
  nlohmann::json j = {{"status", status_name(worst(findings))},
                      {"counts",
                       {{"error", count(findings, Status::kError)},
                        {"warning", count(findings, Status::kWarning)},
                        {"ok", count(findings, Status::kOk)}}},
                      {"findings", list}};
  return j;
}

nlohmann::ordered_json report_json(const CheckListReport& r) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const Check& c : r.checks) j.push_back({{"name", c.name}, {"summary", c.summary}});
  return j;
}

std::string report_text(const CheckListReport& r, const Style&) {
  std::string out;
  for (const Check& c : r.checks) out += std::string(c.name) + "\t" + c.summary + "\n";
  return out;
}

}  // namespace gpuenv
