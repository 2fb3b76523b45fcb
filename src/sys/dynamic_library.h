// DynamicLibrary: dlopen and a symbol table, for the NVIDIA libraries that
// gpuenv loads at run time instead of linking (NVML, the CUDA driver).
#pragma once

#include <array>
#include <span>
#include <string>

namespace gpuenv {

/// A function pointer resolved from a library, with the name it was found
/// under (the newest of its versions that the library exports), so that
/// messages name the call that ran. `call` stays null when absent.
template <typename F>
struct Fn {
  F call = nullptr;
  const char* name = nullptr;
};

/// One row of a symbol table: names to try, newest first (unused trailing
/// entries null), and the Fn to fill with the first that resolves.
struct Symbol {
  std::array<const char*, 3> names{};
  void* target = nullptr;        // &Fn<F>::call
  const char** found = nullptr;  // &Fn<F>::name
  bool required = false;

  template <typename F>
  Symbol(std::array<const char*, 3> n, Fn<F>* fn, bool req)
      : names(n), target(&fn->call), found(&fn->name), required(req) {
    static_assert(sizeof(F) == sizeof(void*), "a symbol must be a function pointer");
  }
};

/// An open shared library; closed (dlclose) when destroyed.
class DynamicLibrary {
 public:
  DynamicLibrary() = default;
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  /// dlopen(name, RTLD_NOW | RTLD_LOCAL) through the normal loader search;
  /// on failure false, with dlerror()'s text in *err. keep_loaded adds
  /// RTLD_NODELETE: closing then leaves the library mapped (for libcuda,
  /// which is not safe to unload once initialised).
  bool open(const std::string& name, std::string* err, bool keep_loaded = false);

  /// Fills every row of the table. Optional rows that resolve to nothing
  /// stay null. False when a required row is missing, with its names in
  /// *missing ("nvmlInit_v2 or nvmlInit").
  bool resolve(std::span<const Symbol> table, std::string* missing) const;

 private:
  void* handle_ = nullptr;
};

}  // namespace gpuenv
