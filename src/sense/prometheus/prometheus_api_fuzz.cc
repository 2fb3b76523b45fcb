// libFuzzer: any bytes as an answer of Prometheus's query API (what a server
// the user named sends back), as a --since duration and as an --end time.
// The parser never throws or crashes; a refusal says why and leaves no
// series; an accepted answer holds no more samples than its bytes can. A
// duration is positive and finite, a time finite. A query built from the bytes escapes to
// unreserved characters and %XX only.
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "sense/prometheus/prometheus_api.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuenv::prom;
  std::string in(reinterpret_cast<const char*>(data), size);
  std::vector<Series> out;
  std::string err;
  if (parse_answer(in, &out, &err)) {
    std::size_t samples = 0;
    for (const Series& s : out) samples += s.samples.size();
    if (samples * 5 > size) std::abort();  // each is at least "[1,1]": none made up
  } else if (err.empty() || !out.empty()) {
    std::abort();
  }
  double seconds = 0;
  if (parse_duration(in, &seconds) && (!(seconds > 0) || !std::isfinite(seconds))) std::abort();
  double t = 0;
  if (parse_time(in, &t) && !std::isfinite(t)) std::abort();
  std::string url = url_escape(either_job("m{}", in));
  for (std::size_t i = 0; i < url.size(); ++i) {
    char c = url[i];
    bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                 c == '.' || c == '_' || c == '~';
    if (!plain && (c != '%' || i + 2 >= url.size() || !std::isxdigit(static_cast<unsigned char>(url[i + 1])) ||
                   !std::isxdigit(static_cast<unsigned char>(url[i + 2]))))
      std::abort();
  }
  return 0;
}
