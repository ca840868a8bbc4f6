// granary report: a run report or a plan result as PDF, HTML and CSV for procurement
// (gui/report/report_document.h, docs/report-export.md).
#include <QGuiApplication>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "gui/report/report_render.h"

namespace granary::cli {
namespace {

struct ReportArgs {
  std::string path;
  std::string pdf, html, csv;
  std::string validation;  // --validation: scripts/validation_table.py --results
};

Result<nlohmann::json> read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::not_found(path + ": cannot open the file");
  std::stringstream text;
  text << in.rdbuf();
  auto j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::invalid_argument(path + ": not a JSON file");
  return j;
}

void run_report(const ReportArgs& a, ExitCode& code) {
  if (a.pdf.empty() && a.html.empty() && a.csv.empty()) {
    return fail_input(code, "report: give at least one of --pdf, --html, --csv");
  }
  auto j = read_json(a.path);
  if (!j.ok()) return fail_input(code, j.status());
  auto doc = report::document_for(*j, a.path);
  if (!doc.ok()) return fail_input(code, doc.status());
  if (!a.validation.empty()) {
    auto v = read_json(a.validation);
    if (!v.ok()) return fail_input(code, v.status());
    if (Status s = report::add_validation(*doc, *v, a.validation); !s.ok()) {
      return fail_input(code, s);
    }
  }
  // Fonts and painting need a QGuiApplication; a terminal has no display.
  if (std::getenv("QT_QPA_PLATFORM") == nullptr) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  int argc = 1;
  char name[] = "granary";
  char* argv[] = {name, nullptr};
  QGuiApplication app(argc, argv);
  if (!a.pdf.empty()) {
    if (Status s = report::write_pdf(*doc, a.pdf); !s.ok()) return fail_input(code, s);
    std::cout << "wrote " << a.pdf << "\n";
  }
  if (!a.html.empty()) {
    if (Status s = report::write_html(*doc, a.html); !s.ok()) return fail_input(code, s);
    std::cout << "wrote " << a.html << "\n";
  }
  if (!a.csv.empty()) {
    auto files = report::write_csv(*doc, a.csv);
    if (!files.ok()) return fail_input(code, files.status());
    for (const auto& f : *files) std::cout << "wrote " << f << "\n";
  }
}

}  // namespace

void register_report_command(CLI::App& app, ExitCode& code) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Export a run report or a plan result as PDF, HTML and CSV (docs/report-export.md)");
  cmd->add_option("file", args->path,
                  "RUN.json (granary run --out) or PLAN-RESULT.json "
                  "(granary plan capacity --out)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--pdf", args->pdf, "write the report as PDF");
  cmd->add_option("--html", args->html, "write the report as one self-contained HTML file");
  cmd->add_option("--csv", args->csv,
                  "write the main table as CSV (a plan's points; its bill of materials beside it "
                  "as STEM-bom.csv)");
  cmd->add_option("--validation", args->validation,
                  "add the comparisons with published figures from this file "
                  "(scripts/validation_table.py --results FILE)")
      ->check(CLI::ExistingFile);
  cmd->callback([args, &code] { run_report(*args, code); });
}

}  // namespace granary::cli
