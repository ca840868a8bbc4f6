// Procurement reports: a run report (`granary run --out`) or a plan result (`granary plan
// capacity --out`) as a document of headings, paragraphs, tables and charts, which
// report_render.h writes as PDF, self-contained HTML or CSV (`granary report`, the GUI's
// Export). Every figure comes from the JSON with its unit; nothing is typed in.
//
// A plan's document: the question, the recommended design and what binds, the bill of
// materials (example prices, labelled), the targets with their values and where each comes
// from (exact, bound, measured), charts of the cost-versus-margin front and of the screened
// space, the cases' figures (failure cases' recovery and durability), the assumptions and model
// sources, the evidence (counts, bounds against measurements), and Granary's version and the
// files' SHA-256. A run's: the scenario, the summary figures, the bounds, throughput and AU over
// time, recovery, latencies, expectations.
//
// Plain data and pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/status.h"

namespace granary::report {

struct Table {
  std::string title;
  std::vector<std::string> headers;  // each with its unit, e.g. "total (USD)"
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> numeric;  // per column: right-aligned
  std::string note;           // under the table
};

struct Series {
  std::string name;
  std::vector<double> x, y;
  bool points = false;  // markers only (a scatter), else a line
};

struct Chart {
  std::string title;
  std::string x_label, y_label;  // with units
  std::vector<Series> series;
  std::optional<double> y_reference;  // a horizontal line (a target, a bound)
  std::string reference_label;
};

struct Block {
  enum class Kind { kHeading, kParagraph, kTable, kChart };
  Kind kind = Kind::kParagraph;
  std::string text;  // heading or paragraph
  Table table;
  Chart chart;
};

struct Document {
  std::string title;
  std::string subtitle;
  std::vector<Block> blocks;
  std::string footer;  // version and hashes, on every page
  // The tables CSV export writes, by name ("points", "bom", "metrics"); the first is the main.
  std::vector<std::pair<std::string, Table>> csv;
};

// The document of a plan result (granary_plan_result 1).
Result<Document> plan_document(const nlohmann::json& result);
// The document of a run report (granary_report).
Result<Document> run_document(const nlohmann::json& report);
// Either, by the file's format key; InvalidArgument naming `path` for any other JSON.
Result<Document> document_for(const nlohmann::json& j, const std::string& path);

// Adds the section "Validation against published figures" from the figures of
// `scripts/validation_table.py --results FILE` (its "mlperf" and "recovery" rows: published
// against Granary, the error, the tolerance, the verdict), read from `path` for the messages.
// InvalidArgument naming `path` for a file that is not such a result.
Status add_validation(Document& d, const nlohmann::json& results, const std::string& path);

// "$1,234,567" (whole dollars).
std::string usd(double v);
// `v` with `digits` decimals.
std::string fixed(double v, int digits);

}  // namespace granary::report
