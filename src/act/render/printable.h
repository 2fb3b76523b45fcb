// The one sanitiser for text gpuenv shows on a terminal, stdout and stderr
// alike: outside text (a snapshot's fields, a stored row, a file name) must
// not move the cursor, retitle the window or clear the screen.
#pragma once

#include <string>
#include <string_view>

namespace gpuenv {

/// Makes outside text safe for a terminal. Escaped: every C0 control
/// (U+0000-U+001F, "\x1b" -> "\\x1b"), DEL, every C1 control encoded in UTF-8
/// (U+0080-U+009F, CSI U+009B -> "\\u009b"), and every byte that is not part
/// of valid UTF-8 (a raw 0x9B -> "\\x9b"). Other valid UTF-8 passes.
std::string printable(std::string_view s);

/// printable() that keeps \n and \t, for text laid out in lines.
std::string printable_lines(std::string_view s);

/// Whether `s` is valid UTF-8 (RFC 3629: no overlong forms, no surrogates).
bool valid_utf8(std::string_view s);

}  // namespace gpuenv
