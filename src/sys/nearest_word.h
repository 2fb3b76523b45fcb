// The word a person most likely meant: the edit distance between two words
// and the nearest of a list, for "did you mean 'detect'?" (cli/app.cc).
// libc and std only, as all of sys/.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpuenv {

/// The Damerau-Levenshtein distance (optimal string alignment) between `a`
/// and `b`, in bytes: the insertions, deletions, substitutions and swaps of
/// two neighbours that turn one into the other. edit_distance("detec",
/// "detect") -> 1, edit_distance("lables", "labels") -> 1.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The one of `candidates` that `word` most likely misspells: the only one
/// it begins (at least two characters), else the nearest by edit_distance
/// when that is at most a third of the longer word (and at least 1); "" when
/// none is near.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace gpuenv
