// Where the process writes: a terminal or not, its width, and whether colour
// and UTF-8 block characters are wanted there. The one home for isatty,
// TIOCGWINSZ and the COLUMNS, NO_COLOR, TERM and LC_ALL/LC_CTYPE/LANG
// conventions.
#pragma once

#include <cstddef>
#include <cstdio>

namespace gpuenv {

/// Whether `stream` is a terminal.
bool is_terminal(FILE* stream);

/// How many columns `stream` shows: a terminal's window size (TIOCGWINSZ),
/// else $COLUMNS (a pipe too: `COLUMNS=100 gpuenv explain | less`, at most
/// 10000), else 80 on a terminal; 0 for a pipe or a file without $COLUMNS,
/// where lines are printed whole.
std::size_t terminal_columns(FILE* stream);

/// Colour on `stream`: a terminal, $NO_COLOR unset or empty, $TERM not "dumb".
bool color_wanted(FILE* stream);

/// Whether the locale's character set is UTF-8: the first of LC_ALL,
/// LC_CTYPE and LANG that is set and not empty names it (nullptr: unset).
bool utf8_locale(const char* lc_all, const char* lc_ctype, const char* lang);
/// The same, of this process's environment.
bool utf8_locale();

}  // namespace gpuenv
