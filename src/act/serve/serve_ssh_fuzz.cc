// libFuzzer: any bytes given as authorized keys keep only lines that are
// public keys, one per line, and name every other line by number and a
// fixed reason, never by its text (it may come from a file of secrets).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "act/serve/serve_ssh.h"

namespace {

const std::set<std::string>& reasons() {
  static const std::set<std::string> kReasons = {
      "a control character",
      "a PEM line, as in a private key (pass the .pub file)",
      "an options field whose quote is not closed",
      "no key type",
      "not a key type OpenSSH accepts",
      "the key is not base64",
      "the key's data is not of its type"};
  return kReasons;
}

void check_kept(const gpuenv::KeyLines& k) {
  int lines = 0;
  size_t start = 0;
  while (start < k.text.size()) {
    size_t end = k.text.find('\n', start);
    if (end == std::string::npos) std::abort();  // every kept line ends in a newline
    if (!gpuenv::public_key_problem(k.text.substr(start, end - start)).empty()) std::abort();
    ++lines;
    start = end + 1;
  }
  if (lines != k.keys) std::abort();
}

void check_rejected(const gpuenv::KeyLines& k) {
  const std::string marker = ": not an OpenSSH public key: ";
  for (const auto& r : k.rejected) {
    size_t at = r.find(marker);
    if (r.rfind("F line ", 0) != 0 || at == std::string::npos ||
        !reasons().count(r.substr(at + marker.size()))) {
      std::fprintf(stderr, "unexpected report: %s\n", r.c_str());
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  gpuenv::KeyLines k;
  gpuenv::add_key_lines(text, "F", &k);
  check_kept(k);
  check_rejected(k);
  return 0;
}
