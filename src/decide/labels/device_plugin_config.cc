#include "decide/labels/device_plugin_config.h"

#include <nlohmann/json.hpp>

#include "sys/text.h"

namespace gpuenv {
namespace {

using json = nlohmann::json;

struct ConfigError {
  std::string what;
};

[[noreturn]] void fail(const std::string& what) { throw ConfigError{what}; }

// ---- YAML, the block subset config files are written in -----------------

struct Line {
  int indent;
  std::string text;
  int number;
};

bool opens_quote(const std::string& s, std::size_t i) {
  std::size_t j = s.find_last_not_of(' ', i == 0 ? std::string::npos : i - 1);
  return i == 0 || j == std::string::npos || std::string(":-[,{").find(s[j]) != std::string::npos;
}

// The line without its comment: '#' at its start or after a blank, outside
// a quoted scalar.
std::string strip_comment(const std::string& s) {
  char quote = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) quote = 0;
    } else if ((c == '"' || c == '\'') && opens_quote(s, i)) {
      quote = c;
    } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      return s.substr(0, i);
    }
  }
  return s;
}

std::vector<Line> yaml_lines(const std::string& text) {
  std::vector<Line> out;
  int number = 0;
  for (std::string_view raw : split(text, '\n')) {
    ++number;
    std::string s = strip_comment(std::string(raw));
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
    std::size_t indent = s.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    if (s[indent] == '\t') fail("line " + std::to_string(number) + ": a tab in the indentation");
    if (out.empty() && s == "---") continue;
    if (indent == 0 && (s == "---" || s == "...")) break;  // one document
    out.push_back({static_cast<int>(indent), s.substr(indent), number});
  }
  return out;
}

bool sequence_item(const std::string& t) { return t == "-" || t.rfind("- ", 0) == 0; }

// Where "KEY: VALUE" splits: a ':' followed by a blank or the end, outside
// quotes; npos for a line that is no mapping entry.
std::size_t key_colon(const std::string& t) {
  if (t.empty() || t[0] == '[' || t[0] == '{') return std::string::npos;
  char quote = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (quote) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) quote = 0;
    } else if ((c == '"' || c == '\'') && i == 0) {
      quote = c;
    } else if (c == ':' && (i + 1 == t.size() || t[i + 1] == ' ')) {
      return i;
    }
  }
  return std::string::npos;
}

std::string double_quoted(const std::string& s, int number) {
  std::string out;
  std::size_t i = 1;
  for (; i < s.size() && s[i] != '"'; ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    char e = s[++i];
    out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
  }
  if (i + 1 != s.size()) fail("line " + std::to_string(number) + ": text after a quoted string, or no closing quote");
  return out;
}

std::string single_quoted(const std::string& s, int number) {
  std::string out;
  std::size_t i = 1;
  for (; i < s.size(); ++i) {
    if (s[i] != '\'') {
      out += s[i];
    } else if (i + 1 < s.size() && s[i + 1] == '\'') {
      out += '\'', ++i;
    } else {
      break;
    }
  }
  if (i + 1 != s.size()) fail("line " + std::to_string(number) + ": text after a quoted string, or no closing quote");
  return out;
}

std::string key_text(const std::string& k, int number) {
  if (k.empty()) fail("line " + std::to_string(number) + ": a key that is empty");
  return k[0] == '"' ? double_quoted(k, number) : k[0] == '\'' ? single_quoted(k, number) : k;
}

// Deeper than any device plugin config nests; a deeper file is refused
// rather than read with a recursion as deep as the file is long.
constexpr int kMaxDepth = 32;

class Yaml {
 public:
  explicit Yaml(std::vector<Line> lines) : lines_(std::move(lines)) {}

  json document() {
    json root = block(0);
    if (pos_ < lines_.size()) fail(where() + ": not indented as the lines before it");
    return root;
  }

 private:
  bool more(int indent) const { return pos_ < lines_.size() && lines_[pos_].indent >= indent; }
  std::string where() const { return "line " + std::to_string(lines_[pos_].number); }

  // The node whose first line is the next one, if it is indented at least `indent`.
  json block(int indent) {
    if (!more(indent)) return nullptr;
    if (++depth_ > kMaxDepth) fail(where() + ": nested more than " + std::to_string(kMaxDepth) + " deep");
    const Line l = lines_[pos_];
    json out;
    if (sequence_item(l.text)) {
      out = sequence(l.indent);
    } else if (key_colon(l.text) != std::string::npos) {
      out = mapping(l.indent);
    } else {
      ++pos_;
      out = scalar(l.text, l.indent, l.number);
    }
    --depth_;
    return out;
  }

  json mapping(int indent) {
    json out = json::object();
    while (pos_ < lines_.size() && lines_[pos_].indent == indent) {
      Line l = lines_[pos_];
      std::size_t colon = key_colon(l.text);
      if (colon == std::string::npos) fail(where() + ": expected KEY: VALUE");
      std::string key = key_text(std::string(trim(l.text.substr(0, colon))), l.number);
      std::string value(trim(l.text.substr(colon + 1)));
      ++pos_;
      out[key] = value.empty() ? nested(indent) : scalar(value, indent, l.number);
    }
    if (more(indent + 1)) fail(where() + ": indented deeper than the key before it");
    return out;
  }

  // A key's value on the lines below it; a sequence may sit at the key's own indent.
  json nested(int indent) {
    if (more(indent + 1)) return block(indent + 1);
    if (pos_ < lines_.size() && lines_[pos_].indent == indent && sequence_item(lines_[pos_].text))
      return sequence(indent);
    return nullptr;
  }

  json sequence(int indent) {
    json out = json::array();
    while (pos_ < lines_.size() && lines_[pos_].indent == indent && sequence_item(lines_[pos_].text)) {
      Line& l = lines_[pos_];
      std::size_t start = l.text.find_first_not_of(' ', 1);
      if (start == std::string::npos) {
        ++pos_;
        out.push_back(block(indent + 1));
        continue;
      }
      // "- key: value": the item's content read as a line of its own, at its column.
      l = {indent + static_cast<int>(start), l.text.substr(start), l.number};
      out.push_back(block(l.indent));
    }
    return out;
  }

  json scalar(const std::string& s, int indent, int number) {
    if (s[0] == '"') return double_quoted(s, number);
    if (s[0] == '\'') return single_quoted(s, number);
    if (s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
    if (s == "{}") return json::object();
    if (s[0] == '[') return flow_sequence(s, indent, number);
    if (s[0] == '|' || s[0] == '>') return block_scalar(indent);
    return s;
  }

  // [a, b, "c"]; anything nested is kept as text.
  json flow_sequence(const std::string& s, int indent, int number) {
    if (s.back() != ']' || s.find_first_of("[]{}", 1) != s.size() - 1) return s;
    json out = json::array();
    std::string inner(trim(s.substr(1, s.size() - 2)));
    if (inner.empty()) return out;
    for (std::string_view item : split(inner, ','))
      out.push_back(scalar(std::string(trim(item)), indent, number));
    return out;
  }

  // | or >: the lines indented deeper than the key, kept as text.
  json block_scalar(int indent) {
    std::string out;
    while (more(indent + 1)) out += (out.empty() ? "" : "\n") + lines_[pos_++].text;
    return out;
  }

  std::vector<Line> lines_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

json parse_tree(const std::string& text) {
  std::string_view start = trim(text);
  if (!start.empty() && start[0] == '{') {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) fail("not JSON (it starts with '{')");
    return j;
  }
  return Yaml(yaml_lines(text)).document();
}

// ---- the fields GFD's labels read ----------------------------------------

const json* field(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

const json& object_at(const json& node, const std::string& path) {
  if (!node.is_object()) fail(path + ": expected a mapping");
  return node;
}

std::string string_at(const json& node, const std::string& path) {
  if (!node.is_string()) fail(path + ": expected a string");
  return node.get<std::string>();
}

bool bool_at(const json& node, const std::string& path) {
  if (node.is_boolean()) return node.get<bool>();
  std::string s = node.is_string() ? ascii_lower(node.get<std::string>()) : "";
  if (s == "true" || s == "false") return s == "true";
  fail(path + ": expected true or false");
}

int replicas_at(const json& node, const std::string& path) {
  long long n = -1;
  if (node.is_number_integer()) n = node.get<long long>();
  if (node.is_string()) {
    const std::string& s = node.get_ref<const std::string&>();
    if (!s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos) n = std::stoll(s);
  }
  if (n < 1 || n > 1000000) fail(path + ": expected a whole number of replicas, 1 or more");
  return static_cast<int>(n);
}

ReplicatedResource resource_at(const json& node, const std::string& path, bool rename_by_default) {
  object_at(node, path);
  ReplicatedResource r;
  const json* name = field(node, "name");
  if (!name) fail(path + ".name: missing");
  r.name = string_at(*name, path + ".name");
  const json* replicas = field(node, "replicas");
  if (!replicas) fail(path + ".replicas: missing");
  r.replicas = replicas_at(*replicas, path + ".replicas");
  if (const json* rename = field(node, "rename")) r.rename = string_at(*rename, path + ".rename");
  if (r.rename.empty() && rename_by_default) r.rename = r.name + ".shared";
  return r;
}

std::vector<ReplicatedResource> resources_at(const json& node, const std::string& path) {
  object_at(node, path);
  bool rename_by_default = false;
  if (const json* b = field(node, "renameByDefault")) rename_by_default = bool_at(*b, path + ".renameByDefault");
  std::vector<ReplicatedResource> out;
  const json* list = field(node, "resources");
  if (!list) return out;
  if (!list->is_array()) fail(path + ".resources: expected a list");
  for (std::size_t i = 0; i < list->size(); ++i)
    out.push_back(resource_at((*list)[i], path + ".resources[" + std::to_string(i) + "]", rename_by_default));
  return out;
}

DevicePluginConfig config_of(const json& root) {
  DevicePluginConfig c;
  if (root.is_null()) return c;  // an empty file: the defaults
  object_at(root, "the file");
  if (const json* v = field(root, "version"); v && string_at(*v, "version") != "v1")
    fail("version: " + v->get<std::string>() + " is not v1, the only version the device plugin knows");
  if (const json* flags = field(root, "flags"))
    if (const json* s = field(object_at(*flags, "flags"), "migStrategy")) {
      c.mig_strategy = string_at(*s, "flags.migStrategy");
      if (*c.mig_strategy != "none" && *c.mig_strategy != "single" && *c.mig_strategy != "mixed")
        fail("flags.migStrategy: " + *c.mig_strategy + " is not none, single or mixed");
    }
  const json* sharing = field(root, "sharing");
  if (!sharing) return c;
  object_at(*sharing, "sharing");
  if (const json* t = field(*sharing, "timeSlicing")) c.time_slicing = resources_at(*t, "sharing.timeSlicing");
  if (const json* m = field(*sharing, "mps")) c.mps = resources_at(*m, "sharing.mps");
  return c;
}

bool replicated(const std::vector<ReplicatedResource>& rs) {
  for (const ReplicatedResource& r : rs)
    if (r.replicas > 1) return true;
  return false;
}

}  // namespace

std::string sharing_strategy(const DevicePluginConfig& c) {
  if (c.mps && replicated(*c.mps)) return "mps";
  return replicated(c.time_slicing) ? "time-slicing" : "none";
}

const ReplicatedResource* replication_of(const DevicePluginConfig& c, const std::string& name) {
  const std::vector<ReplicatedResource>& rs = c.mps ? *c.mps : c.time_slicing;
  for (const ReplicatedResource& r : rs)
    if (r.name == name) return &r;
  return nullptr;
}

bool parse_device_plugin_config(const std::string& text, DevicePluginConfig* out, std::string* err) {
  try {
    *out = config_of(parse_tree(text));
    return true;
  } catch (const ConfigError& e) {
    *err = e.what;
  } catch (const json::exception& e) {
    *err = std::string("not JSON: ") + e.what();
  }
  return false;
}

}  // namespace gpuenv
