#include "model/json_strict.h"

#include <set>
#include <vector>

namespace gpuenv {
namespace {

using nlohmann::json;

class DuplicateKeys {
 public:
  std::string first;  // "gpus[0]: the key \"index\" is given twice"
  std::string root = "snapshot";  // what the top level is called

  void see(json::parse_event_t event, const json& parsed) {
    using E = json::parse_event_t;
    if (event == E::object_start || event == E::array_start) {
      frames_.push_back({event == E::array_start, 0, "", {}});
    } else if (event == E::object_end || event == E::array_end) {
      frames_.pop_back();
      next_element();
    } else if (event == E::key) {
      key(parsed.get<std::string>());
    } else if (event == E::value) {
      next_element();
    }
  }

 private:
  struct Frame {
    bool array = false;
    std::size_t index = 0;     // of the element being read, in an array
    std::string key;           // being read, in an object
    std::set<std::string> keys;  // seen, in an object
  };

  void next_element() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }

  void key(const std::string& k) {
    Frame& f = frames_.back();
    f.key = k;
    if (f.keys.insert(k).second || !first.empty()) return;
    std::string where = path(frames_.size() - 1);
    first = (where.empty() ? root : where) + ": the key \"" + k + "\" is given twice";
  }

  // "gpus[0].pcie" for the object that frames_[0..depth) lead to.
  std::string path(std::size_t depth) const {
    std::string out;
    for (std::size_t i = 0; i < depth; ++i) {
      const Frame& f = frames_[i];
      out += f.array ? "[" + std::to_string(f.index) + "]" : (out.empty() ? "" : ".") + f.key;
    }
    return out;
  }

  std::vector<Frame> frames_;
};

}  // namespace

bool parse_json_strict(const std::string& text, json* out, std::string* err, const std::string& root) {
  DuplicateKeys duplicates;
  duplicates.root = root;
  try {
    *out = json::parse(text, [&](int, json::parse_event_t event, json& parsed) {
      duplicates.see(event, parsed);
      return true;
    });
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e999
    *err = std::string("not valid JSON: ") + e.what();
    return false;
  }
  if (!duplicates.first.empty()) {
    *err = duplicates.first;
    return false;
  }
  return true;
}

}  // namespace gpuenv
