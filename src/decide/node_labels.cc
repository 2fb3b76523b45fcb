#include "decide/node_labels.h"

#include <algorithm>
#include <cctype>

#include "decide/health.h"
#include "decide/labels/labelers.h"

namespace gpuenv {
namespace {

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool value_char(char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; }

// The GPUs a pod can be given: not the ones that fell off the bus.
std::vector<const Gpu*> serving(const Machine& m) {
  std::vector<const Gpu*> out;
  for (const Gpu& g : m.gpus)
    if (!g.problem) out.push_back(&g);
  return out;
}

// Leaves out every value Kubernetes would refuse, saying which (names with
// `prefix`, "" for gpuenv.dev/'s as they always were).
void keep_valid(NodeLabels* l, const std::string& prefix, std::vector<std::string>* dropped) {
  for (auto it = l->begin(); it != l->end();) {
    if (valid_label_value(it->second)) {
      ++it;
      continue;
    }
    if (dropped)
      dropped->push_back(prefix + it->first + "=" + it->second +
                         ": not a Kubernetes label value (at most 63 of [-._A-Za-z0-9], a letter or digit at "
                         "each end), so the label is left out");
    it = l->erase(it);
  }
}

LabelContext context(const Machine& m, const std::optional<std::string>& doctor, const LabelOptions& o) {
  LabelContext c{m, serving(m), doctor};
  if (o.device_plugin) c.device_plugin = &*o.device_plugin;
  return c;
}

}  // namespace

std::string label_value(const std::string& s) {
  std::string out;
  for (char c : s) out += value_char(c) ? c : '-';
  if (out.size() > 63) out.resize(63);
  std::size_t first = 0;
  while (first < out.size() && !alnum(out[first])) ++first;
  out.erase(0, first);
  while (!out.empty() && !alnum(out.back())) out.pop_back();
  return out;
}

bool valid_label_value(const std::string& s) {
  if (s.empty()) return true;
  return s.size() <= 63 && alnum(s.front()) && alnum(s.back()) &&
         std::all_of(s.begin(), s.end(), value_char);
}

NodeLabels node_labels(const Machine& m, const std::optional<std::string>& doctor,
                       std::vector<std::string>* dropped) {
  return node_label_set(m, doctor, LabelOptions{}, dropped).gpuenv;
}

LabelSet node_label_set(const Machine& m, const std::optional<std::string>& doctor, const LabelOptions& o,
                        std::vector<std::string>* dropped) {
  LabelContext c = context(m, doctor, o);
  bool gfd = o.ns == LabelNamespace::kNvidia;
  LabelSet out;
  out.gpuenv = run_labelers(gpuenv_labelers(), c, gfd, dropped);
  keep_valid(&out.gpuenv, "", dropped);
  if (!gfd) return out;
  out.nvidia = run_labelers(gfd_labelers(), c, false, dropped);
  keep_valid(&out.nvidia, kGfdLabelPrefix, dropped);
  return out;
}

std::string feature_file(const NodeLabels& labels, const std::string& expiry) {
  return namespaced_feature_file(LabelSet{labels, {}}, expiry);
}

std::string namespaced_feature_file(const LabelSet& labels, const std::string& expiry) {
  std::string out =
      "# Written by gpuenv labels for Node Feature Discovery's local source.\n"
      "# +expiry-time=" + expiry + "\n";
  for (const auto& [name, value] : qualified_labels(labels)) out += name + "=" + value + "\n";
  return out;
}

std::map<std::string, std::string> qualified_labels(const LabelSet& labels) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : labels.gpuenv) out[kLabelPrefix + name] = value;
  for (const auto& [name, value] : labels.nvidia) out[kGfdLabelPrefix + name] = value;
  return out;
}

}  // namespace gpuenv
