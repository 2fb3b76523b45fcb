// The one form of an error that names a system call and its argument.
#pragma once

#include <cerrno>
#include <string>

namespace gpuenv::sys {

/// "CALL(ARG): strerror(e)": errno_text("open", "/etc/x") ->
/// "open(/etc/x): No such file or directory".
std::string errno_text(const std::string& call, const std::string& arg, int e = errno);

/// "WHAT: strerror(e)", for a call without an argument worth naming.
std::string errno_text(const std::string& what, int e = errno);

}  // namespace gpuenv::sys
