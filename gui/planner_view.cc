// The Planner tab (planner_view.h).
#include "gui/planner_view.h"

#include <QChartView>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineSeries>
#include <QSaveFile>
#include <QScatterSeries>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "gui/charts.h"
#include "gui/report/report_render.h"
#include "models/catalog.h"
#include "planner/design_space.h"
#include "planner/plan.h"

namespace granary::gui {
namespace {

using nlohmann::json;

// The axes in the plan format's order, and whether their values are integers.
const std::vector<std::pair<std::string, bool>> kAxes = {
    {"storage_servers", true}, {"drives_per_server", true},
    {"drive", false},          {"nic", false},
    {"nics_per_server", true}, {"server", false},
    {"redundancy", false},     {"design", false},
    {"protocol", false},       {"gds", false}};
const std::vector<std::pair<std::string, const char*>> kTargets = {
    {"usable_capacity_tb", "usable capacity (TB, at least)"},
    {"durability_nines", "durability (nines, at least)"},
    {"power_kw", "power (kW, at most)"},
    {"rack_units", "rack units (U, at most)"}};

QString values_text(const json& values) {
  QStringList parts;
  for (const json& v : values) {
    parts << (v.is_string() ? QString::fromStdString(v.get<std::string>())
                            : QString::fromStdString(v.dump()));
  }
  return parts.join(", ");
}

QString usd(double v) {
  return QString::fromStdString(report::usd(v));
}

}  // namespace

PlannerView::PlannerView(QWidget* parent) : QWidget(parent) {
  open_ = new QPushButton(tr("Open Plan…"));
  run_ = new QPushButton(tr("Run Plan"));
  cancel_ = new QPushButton(tr("Cancel"));
  open_scenario_ = new QPushButton(tr("Open as Scenario"));
  export_ = new QPushButton(tr("Export Report…"));
  run_->setEnabled(false);
  cancel_->setEnabled(false);
  open_scenario_->setEnabled(false);
  export_->setEnabled(false);
  plan_label_ = new QLabel(tr("No plan open: Open Plan reads a plan file (docs/plan-format.md)."));
  plan_label_->setWordWrap(true);
  error_ = new QLabel;
  error_->setStyleSheet("color: #b71c1c");
  error_->setWordWrap(true);
  headline_ = new QLabel;
  headline_->setWordWrap(true);
  headline_->setTextFormat(Qt::RichText);
  headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* targets = new QFormLayout;
  for (const auto& [key, label] : kTargets) {
    auto* e = new QLineEdit;
    e->setPlaceholderText(tr("none"));
    targets_[key] = e;
    targets->addRow(tr(label), e);
  }
  case_targets_ = new QTableWidget(0, 4);
  case_targets_->setHorizontalHeaderLabels(
      {tr("case"), tr("condition"), tr("threshold"), tr("metric")});
  case_targets_->verticalHeader()->setVisible(false);
  case_targets_->horizontalHeader()->setStretchLastSection(true);
  case_targets_->setMaximumHeight(120);
  targets->addRow(case_targets_);
  auto* target_box = new QGroupBox(tr("Targets"));
  target_box->setLayout(targets);

  auto* space = new QFormLayout;
  for (const auto& [axis, integer] : kAxes) {
    auto* e = new QLineEdit;
    e->setPlaceholderText(tr("the base scenario's"));
    axes_[axis] = e;
    space->addRow(QString::fromStdString(axis), e);
  }
  max_points_ = new QSpinBox;
  max_points_->setRange(1, 100000);
  front_points_ = new QSpinBox;
  front_points_->setRange(0, 1000);
  space->addRow(tr("points simulated at most"), max_points_);
  space->addRow(tr("points beyond the choice"), front_points_);
  auto* space_box = new QGroupBox(tr("Design space and search"));
  space_box->setLayout(space);

  auto* form = new QWidget;
  form->setMinimumWidth(380);
  auto* form_layout = new QVBoxLayout(form);
  form_layout->addWidget(target_box);
  form_layout->addWidget(space_box);
  form_layout->addStretch();

  auto* view = new QChartView;
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumHeight(200);
  chart_ = view->chart();
  chart_->setTitle(tr("Cost versus margin of the simulated designs"));
  chart_->legend()->setAlignment(Qt::AlignBottom);
  table_ = new QTableWidget(0, 6);
  table_->setHorizontalHeaderLabels({tr("point"), tr("design"), tr("cost (USD)"), tr("margin (%)"),
                                     tr("binding target"), tr("meets targets")});
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
  auto* results = new QWidget;
  auto* results_layout = new QVBoxLayout(results);
  results_layout->addWidget(headline_);
  results_layout->addWidget(view, 3);
  results_layout->addWidget(table_, 2);

  // The form scrolls: it never sets the window's minimum height.
  auto* form_scroll = new QScrollArea;
  form_scroll->setWidget(form);
  form_scroll->setWidgetResizable(true);
  form_scroll->setFrameShape(QFrame::NoFrame);
  form_scroll->setMinimumWidth(400);
  auto* split = new QSplitter;
  split->addWidget(form_scroll);
  split->addWidget(results);
  split->setStretchFactor(1, 2);
  auto* buttons = new QHBoxLayout;
  for (QPushButton* b : {open_, run_, cancel_, open_scenario_, export_}) buttons->addWidget(b);
  buttons->addStretch();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 0);
  layout->addLayout(buttons);
  layout->addWidget(plan_label_);
  layout->addWidget(error_);
  layout->addWidget(split, 1);

  connect(open_, &QPushButton::clicked, this, &PlannerView::open_requested);
  connect(run_, &QPushButton::clicked, this, [this] {
    auto p = edited_plan();
    error_->setText(p.ok() ? QString() : QString::fromStdString(p.status().message()));
    if (p.ok()) emit run_requested();
  });
  connect(cancel_, &QPushButton::clicked, this, &PlannerView::cancel_requested);
  connect(export_, &QPushButton::clicked, this, &PlannerView::export_requested);
  connect(open_scenario_, &QPushButton::clicked, this, [this] {
    if (selected_point() >= 0) emit open_scenario_requested(selected_point());
  });
  connect(table_, &QTableWidget::itemSelectionChanged, this,
          [this] { open_scenario_->setEnabled(selected_point() >= 0); });
  redraw();
}

bool PlannerView::open_plan(const QString& path, QString* error) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    *error = tr("%1: cannot open the file").arg(path);
    return false;
  }
  const auto j = json::parse(f.readAll().toStdString(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("granary_plan")) {
    *error = tr("%1: not a plan file (no granary_plan key; docs/plan-format.md)").arg(path);
    return false;
  }
  path_ = path;
  plan_ = j;
  result_.reset();
  points_.clear();
  fill_form();
  redraw();
  auto p = edited_plan();
  error_->setText(p.ok() ? QString() : QString::fromStdString(p.status().message()));
  run_->setEnabled(true);
  export_->setEnabled(false);
  plan_label_->setText(
      tr("<b>%1</b> (%2): %3")
          .arg(QString::fromStdString(plan_.value("name", "")).toHtmlEscaped(),
               path.toHtmlEscaped(),
               QString::fromStdString(plan_.value("description", "")).toHtmlEscaped()));
  set_message(tr("Run Plan screens every design point and simulates the cheapest candidates."));
  return true;
}

void PlannerView::fill_form() {
  const json t = plan_.value("targets", json::object());
  for (const auto& [key, e] : targets_) {
    e->setText(t.contains(key) ? QString::fromStdString(t[key].dump()) : QString());
  }
  const json s = plan_.value("space", json::object());
  for (const auto& [axis, e] : axes_) {
    e->setText(s.contains(axis) ? values_text(s[axis]) : QString());
  }
  case_targets_->setRowCount(0);
  for (const json& c : plan_.value("cases", json::array())) {
    for (const json& x : c.value("targets", json::array())) {
      const int r = case_targets_->rowCount();
      case_targets_->insertRow(r);
      const bool at_least = x.contains("at_least");
      const double v = x.value(at_least ? "at_least" : "at_most", 0.0);
      auto* name = new QTableWidgetItem(QString::fromStdString(c.value("name", "")));
      auto* metric = new QTableWidgetItem(QString::fromStdString(x.value("metric", "")));
      auto* cond = new QTableWidgetItem(at_least ? ">=" : "<=");
      for (auto* item : {name, metric, cond}) item->setFlags(item->flags() & ~Qt::ItemIsEditable);
      metric->setToolTip(metric->text());
      case_targets_->setItem(r, 0, name);
      case_targets_->setItem(r, 1, cond);
      case_targets_->setItem(r, 2, new QTableWidgetItem(QString::number(v)));
      case_targets_->setItem(r, 3, metric);
    }
  }
  const json search = plan_.value("search", json::object());
  max_points_->setValue(search.value("max_points", 40));
  front_points_->setValue(search.value("front_points", 4));
}

Result<json> PlannerView::edited_plan() const {
  if (path_.isEmpty()) return Status::invalid_argument("no plan open");
  json p = plan_;
  for (const auto& [key, e] : targets_) {
    const QString text = e->text().trimmed();
    if (text.isEmpty()) {
      if (p.contains("targets")) p["targets"].erase(key);
      continue;
    }
    bool ok = false;
    const double v = text.toDouble(&ok);
    if (!ok) {
      return Status::invalid_argument(path_.toStdString() + ": targets." + key +
                                      ": expected a number, found \"" + text.toStdString() + "\"");
    }
    p["targets"][key] = key == "rack_units" ? json(static_cast<int64_t>(std::llround(v))) : json(v);
  }
  if (p.contains("targets") && p["targets"].empty()) p.erase("targets");
  int row = 0;
  for (json& c : p["cases"]) {
    for (json& x : c["targets"]) {
      const QTableWidgetItem* item = case_targets_->item(row++, 2);
      bool ok = false;
      const double v = item ? item->text().toDouble(&ok) : 0;
      if (!ok) {
        return Status::invalid_argument(path_.toStdString() + ": case " + c.value("name", "") +
                                        ", target " + x.value("metric", "") +
                                        ": expected a number");
      }
      x[x.contains("at_least") ? "at_least" : "at_most"] = v;
    }
  }
  p["space"] = json::object();
  for (const auto& [axis, integer] : kAxes) {
    const QString text = axes_.at(axis)->text().trimmed();
    if (text.isEmpty()) continue;
    json values = json::array();
    for (const QString& part : text.split(',', Qt::SkipEmptyParts)) {
      const QString v = part.trimmed();
      bool ok = false;
      const int i = v.toInt(&ok);
      if (integer && ok) {
        values.push_back(i);
      } else if (axis == "gds" && (v == "true" || v == "false")) {
        values.push_back(v == "true");
      } else {
        values.push_back(v.toStdString());  // the reader says what is wrong with it
      }
    }
    p["space"][axis] = values;
  }
  p["search"]["max_points"] = max_points_->value();
  p["search"]["front_points"] = front_points_->value();
  auto checked = planner::parse_plan(p.dump(), path_.toStdString(), models::Catalog::built_in());
  if (!checked.ok()) return checked.status();
  return p;
}

Status PlannerView::write_plan_copy(const QString& path) const {
  auto p = edited_plan();
  if (!p.ok()) return p.status();
  const QDir dir = QFileInfo(path_).absoluteDir();
  for (json& c : (*p)["cases"]) {
    c["scenario"] =
        QDir::cleanPath(dir.absoluteFilePath(QString::fromStdString(c["scenario"]))).toStdString();
  }
  QSaveFile f(path);
  const std::string text = p->dump(2) + "\n";
  if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), static_cast<qint64>(text.size())) < 0 ||
      !f.commit()) {
    return Status::io_error(path.toStdString() + ": cannot write the plan");
  }
  return Status::ok_status();
}

void PlannerView::set_running(bool running) {
  run_->setEnabled(!running && !path_.isEmpty());
  open_->setEnabled(!running);
  cancel_->setEnabled(running);
  if (running) {
    result_.reset();
    points_.clear();
    export_->setEnabled(false);
    redraw();
  }
}

void PlannerView::add_point(const json& point) {
  if (!point.contains("margin")) return;  // only simulated points carry one
  points_.push_back(point);
  redraw();
}

void PlannerView::set_result(json result) {
  points_.clear();
  for (const json& p : result["points"]) {
    if (p.contains("margin")) points_.push_back(p);
  }
  result_ = std::move(result);
  export_->setEnabled(true);
  redraw();
  const json& r = *result_;
  if (r["choice"].is_null()) {
    set_message(tr("<b>No design</b>: %1.")
                    .arg(QString::fromStdString(r.value("no_choice", "")).toHtmlEscaped()));
  } else {
    const json& c = r["choice"];
    set_message(tr("<b>Recommended</b>: point %1, %2, %3 at example prices; binding target: %4 "
                   "(margin %5%). %6 points: %7 ruled out by the bounds, %8 simulated.")
                    .arg(c["point"].get<int>())
                    .arg(QString::fromStdString(c["label"]).toHtmlEscaped())
                    .arg(usd(c["cost_usd"].get<double>()))
                    .arg(QString::fromStdString(c["binding"]).toHtmlEscaped())
                    .arg(c["margin"].is_null() ? 0.0 : c["margin"].get<double>() * 100, 0, 'f', 1)
                    .arg(r["counts"]["points"].get<int>())
                    .arg(r["counts"]["ruled_out"].get<int>())
                    .arg(r["counts"]["simulated"].get<int>()));
  }
}

void PlannerView::set_message(const QString& message) {
  headline_->setText(message);
}

void PlannerView::redraw() {
  chart_->removeAllSeries();
  for (QAbstractAxis* a : chart_->axes()) chart_->removeAxis(a);
  auto* simulated = new QScatterSeries;
  simulated->setName(tr("simulated"));
  simulated->setObjectName("data:simulated");
  simulated->setMarkerSize(9);
  auto* front = new QLineSeries;
  front->setName(tr("front"));
  front->setObjectName("data:front");
  auto* choice = new QScatterSeries;
  choice->setName(tr("choice"));
  choice->setObjectName("data:choice");
  choice->setMarkerSize(14);
  double xmin = INFINITY, xmax = -INFINITY, ymin = 0, ymax = 0;
  table_->setRowCount(0);
  for (const json& p : points_) {
    add_row(p);
    if (p["margin"].is_null()) continue;
    const double x = p["cost_usd"].get<double>() / 1000, y = p["margin"].get<double>() * 100;
    simulated->append(x, y);
    xmin = std::min(xmin, x);
    xmax = std::max(xmax, x);
    ymin = std::min(ymin, y);
    ymax = std::max(ymax, y);
  }
  if (result_) {
    for (const json& id : (*result_)["front"]) {
      const json& p = (*result_)["points"][id.get<size_t>()];
      if (!p["margin"].is_null()) {
        front->append(p["cost_usd"].get<double>() / 1000, p["margin"].get<double>() * 100);
      }
    }
    if (!(*result_)["choice"].is_null()) {
      const json& p = (*result_)["points"][(*result_)["choice"]["point"].get<size_t>()];
      if (!p["margin"].is_null()) {
        choice->append(p["cost_usd"].get<double>() / 1000, p["margin"].get<double>() * 100);
      }
    }
  }
  chart_->addSeries(front);
  chart_->addSeries(simulated);
  chart_->addSeries(choice);
  if (!std::isfinite(xmin)) {
    xmin = 0;
    xmax = 1;
  }
  const double pad = std::max(1.0, (xmax - xmin) * 0.05);
  auto* x =
      add_value_axis(chart_, Qt::AlignBottom, tr("cost (thousand USD)"), xmin - pad, xmax + pad);
  auto* y = add_value_axis(chart_, Qt::AlignLeft, tr("margin: smallest target margin (%)"),
                           std::floor(ymin / 10) * 10, nice_ceiling(std::max(ymax, 1.0)));
  for (QAbstractSeries* s :
       {static_cast<QAbstractSeries*>(front), static_cast<QAbstractSeries*>(simulated),
        static_cast<QAbstractSeries*>(choice)}) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
}

void PlannerView::add_row(const json& p) {
  const int r = table_->rowCount();
  table_->insertRow(r);
  const QStringList cells = {
      QString::number(p["index"].get<int>()),
      QString::fromStdString(p.value("label", "")),
      usd(p["cost_usd"].get<double>()),
      p["margin"].is_null() ? "-" : QString::number(p["margin"].get<double>() * 100, 'f', 1),
      QString::fromStdString(p.value("binding", "")),
      p.value("meets_targets", false) ? tr("yes") : tr("no")};
  for (int c = 0; c < cells.size(); ++c) table_->setItem(r, c, new QTableWidgetItem(cells[c]));
}

int PlannerView::selected_point() const {
  const auto rows = table_->selectionModel()->selectedRows();
  if (rows.isEmpty()) return -1;
  const QTableWidgetItem* item = table_->item(rows.front().row(), 0);
  return item ? item->text().toInt() : -1;
}

Status PlannerView::write_point_scenario(int index, int case_index, const QString& path) const {
  auto edited = edited_plan();
  if (!edited.ok()) return edited.status();
  auto plan = planner::parse_plan(edited->dump(), path_.toStdString(), models::Catalog::built_in());
  if (!plan.ok()) return plan.status();
  const auto points = planner::enumerate_points(*plan, models::Catalog::built_in());
  if (index < 0 || static_cast<size_t>(index) >= points.size() || case_index < 0 ||
      static_cast<size_t>(case_index) >= plan->cases.size()) {
    return Status::invalid_argument("the plan has no point " + std::to_string(index) +
                                    " or no case " + std::to_string(case_index));
  }
  const planner::DesignPoint& p = points[static_cast<size_t>(index)];
  if (!p.invalid.empty())
    return Status::invalid_argument("point " + std::to_string(index) + " is invalid: " + p.invalid);
  QSaveFile f(path);
  const std::string& text = p.scenario_texts[static_cast<size_t>(case_index)];
  if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), static_cast<qint64>(text.size())) < 0 ||
      !f.commit()) {
    return Status::io_error(path.toStdString() + ": cannot write the scenario");
  }
  return Status::ok_status();
}

Status PlannerView::export_report(const QString& path) const {
  if (!result_) return Status::invalid_argument("no plan result to export: run the plan first");
  auto doc = report::plan_document(*result_);
  if (!doc.ok()) return doc.status();
  const std::string p = path.toStdString();
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == "pdf") return report::write_pdf(*doc, p);
  if (suffix == "html" || suffix == "htm") return report::write_html(*doc, p);
  if (suffix == "csv") return report::write_csv(*doc, p).status();
  return Status::invalid_argument(p + ": expected a .pdf, .html or .csv file");
}

}  // namespace granary::gui
