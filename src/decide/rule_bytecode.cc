// bytecode: Python's compiled bytecode under the cache root when torch's
// install holds none, so a start stops recompiling torch's sources.
// docs/rules/bytecode.md
#include "decide/rules.h"

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

// PYTHONDONTWRITEBYTECODE=1, which container images set to keep their
// layers free of __pycache__, would stop Python from writing the bytecode at
// all. With PYTHONPYCACHEPREFIX none lands in the image either, so the
// image's value is replaced like a launcher's default.
std::optional<Setting> allow_writing(const Options& o) {
  const std::string* v = o.getenv("PYTHONDONTWRITEBYTECODE");
  if (!v || v->empty()) return std::nullopt;
  Setting s = make_setting("PYTHONDONTWRITEBYTECODE", "",
                           "empty lets Python write the bytecode that PYTHONPYCACHEPREFIX keeps "
                           "under the cache root; none is written into the install or image");
  s.launcher_default = *v;
  s.default_owner = "the container image";
  return s;
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
