#include "sense/error_table.h"

namespace gpuenv {

const LibraryError* find_library_error(std::span<const LibraryError> table, int rc) {
  for (const LibraryError& e : table)
    if (e.rc == rc) return &e;
  return nullptr;
}

Problem library_error_problem(std::span<const LibraryError> table, const UnlistedError& unlisted,
                              const std::string& call, int rc, const char* library_text) {
  const LibraryError* e = find_library_error(table, rc);
  std::string what = e ? e->meaning : library_text ? library_text : unlisted.meaning;
  std::string name = e ? e->name : unlisted.name;
  return {unlisted.source, e ? e->code : unlisted.code,
          call + " failed: " + what + " (" + name + " = " + std::to_string(rc) + ")",
          e ? e->fix : unlisted.fix};
}

}  // namespace gpuenv
