#include "sys/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

namespace gpuenv {

bool is_terminal(FILE* stream) { return isatty(fileno(stream)) == 1; }

std::size_t terminal_columns(FILE* stream) {
  int fd = fileno(stream);
  bool terminal = isatty(fd) == 1;
  winsize ws{};
  if (terminal && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  const char* env = std::getenv("COLUMNS");
  int columns = env ? std::atoi(env) : 0;
  if (columns > 0) return std::size_t(std::min(columns, 10000));
  return terminal ? 80 : 0;
}

bool color_wanted(FILE* stream) {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return is_terminal(stream) && !(no_color && *no_color) && !(term && std::string(term) == "dumb");
}

bool utf8_locale(const char* lc_all, const char* lc_ctype, const char* lang) {
  const char* v = lc_all && *lc_all ? lc_all : lc_ctype && *lc_ctype ? lc_ctype : lang;
  if (!v) return false;
  std::string s(v);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s.find("utf-8") != std::string::npos || s.find("utf8") != std::string::npos;
}

bool utf8_locale() { return utf8_locale(std::getenv("LC_ALL"), std::getenv("LC_CTYPE"), std::getenv("LANG")); }

}  // namespace gpuenv
