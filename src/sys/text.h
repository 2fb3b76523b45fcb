// Text helpers every layer may use: splitting, trimming, joining, and the
// UTC timestamps gpuenv writes. No gpuenv types; the phrases that name a
// model fact (gpu_label, cc_string) live in model/.
#pragma once

#include <ctime>
#include <string>
#include <string_view>
#include <vector>

namespace gpuenv {

/// `v` with `decimals` digits after the point ("%.*f"): fixed(9.46, 1) -> "9.5".
std::string fixed(double v, int decimals = 0);

/// What trim() takes off by default: spaces, tabs, CRs and newlines.
inline constexpr std::string_view kBlank = " \t\r\n";

/// `s` without the characters of `chars` around it: trim(" a b\n") ->
/// "a b". The view points into `s`, so `s` must outlive it.
std::string_view trim(std::string_view s, std::string_view chars = kBlank);

/// The pieces of `s` between the `sep`s, empty ones kept: split("a,,b", ',')
/// -> {"a", "", "b"}; "" -> {""}. The views point into `s`.
std::vector<std::string_view> split(std::string_view s, char sep);

/// The items with `sep` between them: join({"a", "b"}, ", ") -> "a, b".
std::string join(const std::vector<std::string>& items, const std::string& sep);

/// The comma-separated items of `s`, each trimmed of spaces and tabs, empty
/// ones left out: "a, b,,c" -> {"a", "b", "c"}.
std::vector<std::string> split_commas(const std::string& s);

/// `s` in ASCII lower case.
std::string ascii_lower(std::string s);

/// The one way gpuenv shortens text: the longest prefix of `s` of at most
/// `max` bytes that does not end inside a UTF-8 character ("ab€" cut at 4
/// -> "ab", never "ab\xe2\x82"). The view points into `s`.
std::string_view utf8_prefix(std::string_view s, std::size_t max);

/// `t` as RFC 3339 UTC, to the second: "2025-03-04T12:00:00Z".
std::string utc_time(std::time_t t);
/// utc_time of the present second.
std::string utc_now();
/// The present as RFC 3339 UTC to the millisecond: "2026-01-02T03:04:05.678Z"
/// (the structured log's "time").
std::string utc_now_ms();
/// utc_now_ms into `buf` without allocating (for a log line written when
/// memory may have run out).
void utc_now_ms(char (&buf)[32]);

}  // namespace gpuenv
