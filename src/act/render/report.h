// The one output sink of a report. Every report a command prints is one
// value with two faces, declared together beside its renderers
// (act/render/*_report.h): `report_json(r)`, the JSON document's value, and
// `report_text(r, style)`, what a person reads. A command prints a report
// only through format_report, with the Format its --json flag chose; a
// report that lacks either face does not compile there (report_test.cc
// names every one).
#pragma once

#include <concepts>
#include <nlohmann/json.hpp>
#include <string>

#include "act/render/machine_report.h"
#include "model/json_text.h"

namespace gpuenv {

enum class Format { kText, kJson };

/// The Format a --json flag chooses.
constexpr Format format_of(bool json) { return json ? Format::kJson : Format::kText; }

/// A JSON value as nlohmann holds it: keys sorted, or in insertion order
/// (the faces that have always printed in that order keep it).
template <typename J>
concept JsonValue = std::same_as<J, nlohmann::json> || std::same_as<J, nlohmann::ordered_json>;

/// A report: both faces, found by argument-dependent lookup.
template <typename R>
concept Report = requires(const R& r, const Style& s) {
  { report_json(r) } -> JsonValue;
  { report_text(r, s) } -> std::same_as<std::string>;
};

/// The face `f` of `r`: the JSON document (indented, a final newline, as
/// model/json_text.h writes every one) or the text.
template <Report R>
std::string format_report(const R& r, Format f, const Style& s) {
  return f == Format::kJson ? json_document(report_json(r)) : report_text(r, s);
}

}  // namespace gpuenv
