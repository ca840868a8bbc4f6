// The report's summary as a table (summary_panel.h).
#include "gui/summary_panel.h"

#include <QHeaderView>
#include <QVBoxLayout>
#include <functional>

namespace granary::gui {

namespace {

QString value_text(const nlohmann::json& v) {
  if (v.is_string()) return QString::fromStdString(v.get<std::string>());
  if (v.is_number_float()) return QString::number(v.get<double>(), 'g', 6);
  return QString::fromStdString(v.dump());
}

}  // namespace

SummaryPanel::SummaryPanel(QWidget* parent)
    : QWidget(parent),
      headline_(new QLabel),
      table_(new QTableWidget(0, 2)),
      expectations_(new QLabel) {
  headline_->setWordWrap(true);
  headline_->setContentsMargins(6, 6, 6, 6);
  table_->setHorizontalHeaderLabels({tr("summary key"), tr("value")});
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->setVisible(false);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setAlternatingRowColors(true);
  expectations_->setWordWrap(true);
  expectations_->setTextFormat(Qt::RichText);
  expectations_->setContentsMargins(6, 6, 6, 6);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(headline_);
  layout->addWidget(table_, 1);
  layout->addWidget(expectations_);
  set_message(tr("No run yet: Run > Run (F5) simulates the scenario."));
}

void SummaryPanel::set_message(const QString& message) {
  headline_->setText(message);
  table_->setRowCount(0);
  expectations_->clear();
}

void SummaryPanel::set_report(const nlohmann::json& report, const QString& headline) {
  QString name;
  if (report.contains("scenario") && report["scenario"].is_object()) {
    name = QString::fromStdString(report["scenario"].value("name", ""));
  }
  headline_->setText(name.isEmpty() ? headline : QString("%1: %2").arg(name, headline));
  table_->setRowCount(0);
  std::function<void(const std::string&, const nlohmann::json&)> add =
      [&](const std::string& key, const nlohmann::json& v) {
        if (v.is_object() && !v.empty()) {
          for (const auto& [k, child] : v.items()) add(key.empty() ? k : key + "." + k, child);
          return;
        }
        const int row = table_->rowCount();
        table_->insertRow(row);
        table_->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(key)));
        table_->setItem(row, 1, new QTableWidgetItem(value_text(v)));
      };
  if (report.contains("summary")) add("", report["summary"]);
  QStringList lines;
  if (report.contains("expectations") && report["expectations"].is_array()) {
    for (const auto& e : report["expectations"]) {
      const bool passed = e.value("passed", false);
      lines << QString("<span style='color:%1'><b>%2</b></span> %3")
                   .arg(passed ? "#2e7d32" : "#c62828", passed ? "PASS" : "FAIL",
                        QString::fromStdString(e.value("name", "") + ": " + e.value("message", ""))
                            .toHtmlEscaped());
    }
  }
  expectations_->setText(lines.join("<br>"));
}

}  // namespace granary::gui
