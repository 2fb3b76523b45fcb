#include "sys/text.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace gpuenv {

std::string_view trim(std::string_view s, std::string_view chars) {
  std::size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(chars) - b + 1);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    std::size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  for (std::string_view item : split(s, ','))
    if (std::string_view w = trim(item, " \t"); !w.empty()) out.emplace_back(w);
  return out;
}

std::string ascii_lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

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

std::string utc_time(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string utc_now() { return utc_time(std::time(nullptr)); }

void utc_now_ms(char (&buf)[32]) {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  std::tm tm{};
  gmtime_r(&ts.tv_sec, &tm);
  std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", int(ts.tv_nsec / 1000000));
}

std::string utc_now_ms() {
  char buf[32];
  utc_now_ms(buf);
  return buf;
}

}  // namespace gpuenv
