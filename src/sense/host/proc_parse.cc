#include "sense/host/proc_parse.h"

#include <charconv>

namespace gpuenv {
namespace {

constexpr long long kPidLimit = 1 << 22;  // PID_MAX_LIMIT on 64-bit Linux

template <typename T>
bool number(std::string_view s, T* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// The space-separated words of `s`.
std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\n') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

bool parse_proc_stat(std::string_view text, ProcStat* out, std::string* err) {
  std::size_t open = text.find('('), close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return *err = "no (comm) in /proc/PID/stat", false;
  ProcStat s;
  std::string_view head = text.substr(0, open);
  while (!head.empty() && head.back() == ' ') head.remove_suffix(1);
  if (!number(head, &s.pid) || s.pid <= 0)
    return *err = "the PID before (comm) is not a positive number", false;
  s.comm = std::string(text.substr(open + 1, close - open - 1));
  // After ") ": state(3) ppid(4) ... utime(14) stime(15), counted from 1.
  std::vector<std::string_view> f = words(text.substr(close + 1));
  if (f.size() < 13) return *err = "fewer than 15 fields in /proc/PID/stat", false;
  if (f[0].size() != 1) return *err = "the state is not one letter", false;
  s.state = f[0][0];
  if (!number(f[1], &s.ppid) || s.ppid < 0) return *err = "the parent PID is not a number", false;
  if (!number(f[11], &s.utime) || !number(f[12], &s.stime)) return *err = "utime or stime is not a number", false;
  *out = std::move(s);
  return true;
}

std::vector<int> parse_pid_list(std::string_view text) {
  std::vector<int> out;
  for (std::string_view w : words(text)) {
    long long pid = 0;
    if (number(w, &pid) && pid > 0 && pid < kPidLimit) out.push_back(static_cast<int>(pid));
  }
  return out;
}

}  // namespace gpuenv
