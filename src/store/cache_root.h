// The cache root: the one directory under which gpuenv keeps what outlives a
// run. The compile caches and Python bytecode (decide/rules/rule_caches.cc,
// rule_bytecode.cc, through Options::cache_root) and the measurement store
// (store.h) all live under it.
#pragma once

#include <functional>
#include <string>

namespace gpuenv {

using Getenv = std::function<const char*(const char*)>;

/// `flag` (--cache-root DIR) when given, else $GPUENV_CACHE_ROOT, else
/// $XDG_CACHE_HOME/gpuenv, else $HOME/.cache/gpuenv; "" when none is set
/// (an empty variable counts as unset). `getenv` is std::getenv outside tests.
std::string resolve_cache_root(const std::string& flag, const Getenv& getenv);

namespace store {

/// The measurement store under a cache root: ROOT/gpuenv.db; "" for "".
std::string path_in(const std::string& cache_root);

/// The store a command uses: --db FILE when given, else path_in(cache_root).
std::string chosen_path(const std::string& db_flag, const std::string& cache_root);

}  // namespace store
}  // namespace gpuenv
