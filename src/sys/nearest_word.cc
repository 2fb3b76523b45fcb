#include "sys/nearest_word.h"

#include <algorithm>

namespace gpuenv {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the table: i-2, i-1 and i.
  std::vector<std::size_t> older(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], older[j - 2] + 1);
    }
    std::swap(older, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::vector<std::string> begun;
  for (const auto& c : candidates)
    if (word.size() >= 2 && c.size() > word.size() && c.compare(0, word.size(), word) == 0) begun.push_back(c);
  if (begun.size() == 1) return begun.front();
  std::string best;
  std::size_t best_d = 0;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (best.empty() || d < best_d) best = c, best_d = d;
  }
  std::size_t limit = std::max<std::size_t>(1, std::max(word.size(), best.size()) / 3);
  return !best.empty() && best_d <= limit ? best : "";
}

}  // namespace gpuenv
