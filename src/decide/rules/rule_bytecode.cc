// bytecode: Python's compiled bytecode under the cache root when torch's
// install holds none, so a start stops recompiling torch's sources.
// docs/rules/bytecode.md
#include "decide/rules/rules.h"

namespace gpuenv {
namespace {

Setting prefix(const Torch& t, const std::string& root) {
  std::string where = t.path ? " at " + *t.path : "";
  return make_setting("PYTHONPYCACHEPREFIX", root + "/python",
                      "torch " + t.version + where +
                          " holds no compiled bytecode, so every start compiles its Python "
                          "sources again (`import torch`: 3.3 s on an H200 host, 1.7 s with "
                          "bytecode); Python keeps the bytecode under the gpuenv cache root "
                          "instead, outside the install");
}

// PYTHONDONTWRITEBYTECODE=1 (container images set it to keep their layers
// free of __pycache__) stops Python from writing the bytecode at all. With
// PYTHONPYCACHEPREFIX none would land in the install, so gpuenv would empty
// it; like any value in the environment, decide() keeps it unless
// --override, and the plan says so.
std::optional<Setting> allow_writing(const Options& o) {
  const std::string* v = o.getenv("PYTHONDONTWRITEBYTECODE");
  if (!v || v->empty()) return std::nullopt;
  return make_setting("PYTHONDONTWRITEBYTECODE", "",
                      "an empty value lets Python write the bytecode that PYTHONPYCACHEPREFIX "
                      "keeps under the cache root; none is written into the install or image");
}

}  // namespace

Decision rule_bytecode(const Machine& m, const Options& o) {
  Decision d;
  if (!m.torch || m.torch->bytecode_cached != false) return d;
  if (o.cache_root.empty()) return d;
  d.settings.push_back(prefix(*m.torch, cache_root_prefix(o)));
  if (auto s = allow_writing(o)) d.settings.push_back(*s);
  return d;
}

}  // namespace gpuenv
