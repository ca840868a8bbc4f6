// The results view (results_view.h).
#include "gui/results_view.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLogValueAxis>
#include <QMessageBox>
#include <QScatterSeries>
#include <QVBoxLayout>
#include <cmath>
#include <functional>

#include "gui/charts.h"
#include "gui/heat_map.h"
#include "gui/report_data.h"

namespace granary::gui {

using nlohmann::json;

namespace {

constexpr int kMaxBars = 64;  // more accelerators than this: a histogram

QString text_of(const json& v) {
  if (v.is_string()) return QString::fromStdString(v.get<std::string>());
  if (v.is_number_float()) return QString::number(v.get<double>(), 'g', 6);
  return QString::fromStdString(v.dump());
}

// Flattens `v` into dotted keys, in the report's order.
void flatten(const std::string& key, const json& v,
             std::vector<std::pair<std::string, json>>* out) {
  if (v.is_object() && !v.empty()) {
    for (const auto& [k, child] : v.items()) flatten(key.empty() ? k : key + "." + k, child, out);
    return;
  }
  out->emplace_back(key, v);
}

const json& object_at(const json& report, const char* key) {
  static const json empty = json::object();
  const auto it = report.find(key);
  return it != report.end() && it->is_object() ? *it : empty;
}

}  // namespace

ResultsView::ResultsView(Options options, QWidget* parent)
    : QWidget(parent), options_(std::move(options)) {
  if (!options_.ask_report_file) {
    options_.ask_report_file = [](QWidget* parent) {
      return QFileDialog::getOpenFileName(parent, tr("Compare with a report"), {},
                                          tr("Reports (*.json)"));
    };
  }
  if (!options_.show_error) {
    options_.show_error = [](QWidget* parent, const QString& message) {
      QMessageBox::critical(parent, tr("Granary"), message);
    };
  }
  headline_ = new QLabel;
  headline_->setWordWrap(true);
  headline_->setTextFormat(Qt::RichText);
  compare_previous_ = new QPushButton(tr("Compare with previous run"));
  compare_file_ = new QPushButton(tr("Compare with report…"));
  clear_compare_ = new QPushButton(tr("Clear comparison"));
  connect(compare_previous_, &QPushButton::clicked, this, [this] { compare_with_previous(); });
  connect(compare_file_, &QPushButton::clicked, this, [this] {
    const QString path = options_.ask_report_file(this);
    QString error;
    if (!path.isEmpty() && !compare_with_file(path, &error)) options_.show_error(this, error);
  });
  connect(clear_compare_, &QPushButton::clicked, this, [this] { clear_comparison(); });
  auto* bar = new QHBoxLayout;
  bar->addWidget(headline_, 1);
  bar->addWidget(compare_previous_);
  bar->addWidget(compare_file_);
  bar->addWidget(clear_compare_);
  scroll_ = new QScrollArea;
  scroll_->setWidgetResizable(true);
  scroll_->setFrameShape(QFrame::NoFrame);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 0);
  layout->addLayout(bar);
  layout->addWidget(scroll_, 1);
  set_message(
      tr("No run yet: Run > Run (F5) simulates the scenario, File > Open Report… "
         "shows a report."));
}

void ResultsView::update_buttons() {
  compare_previous_->setEnabled(report_.has_value() && previous_.has_value());
  compare_file_->setEnabled(report_.has_value());
  clear_compare_->setEnabled(other_.has_value());
}

void ResultsView::clear_pointers() {
  throughput_ = au_ = au_per_accelerator_ = latency_ = kinds_ = nullptr;
  recovery_pgs_ = recovery_rate_ = block_ = nullptr;
  heat_map_ = nullptr;
  summary_ = bounds_ = ceilings_ = expectations_ = saturated_ = busiest_ = nullptr;
}

void ResultsView::set_message(const QString& message) {
  headline_text_ = message;
  headline_->setText(message.toHtmlEscaped());
  clear_pointers();
  if (QWidget* old = scroll_->takeWidget()) old->deleteLater();
  if (report_) previous_ = std::move(report_);
  report_.reset();
  other_.reset();
  update_buttons();
}

void ResultsView::set_report(const json& report, const QString& headline) {
  if (report_) previous_ = std::move(report_);
  report_ = report;
  other_.reset();
  headline_text_ = headline;
  rebuild();
}

bool ResultsView::compare_with_file(const QString& path, QString* error) {
  if (!report_) {
    if (error) *error = tr("No report to compare with: run the scenario or open a report first.");
    return false;
  }
  json other;
  if (Status s = load_report_file(path, &other); !s.ok()) {
    if (error) *error = QString::fromStdString(s.message());
    return false;
  }
  other_ = std::move(other);
  rebuild();
  return true;
}

bool ResultsView::compare_with_previous() {
  if (!report_ || !previous_) return false;
  other_ = previous_;
  rebuild();
  return true;
}

void ResultsView::clear_comparison() {
  if (!other_) return;
  other_.reset();
  rebuild();
}

std::vector<const json*> ResultsView::runs() const {
  std::vector<const json*> out;
  if (report_) out.push_back(&*report_);
  if (other_) out.push_back(&*other_);
  return out;
}

void ResultsView::rebuild() {
  clear_pointers();
  if (QWidget* old = scroll_->takeWidget()) old->deleteLater();
  QString head =
      "<b>" + run_label(*report_).toHtmlEscaped() + "</b>: " + headline_text_.toHtmlEscaped();
  if (other_) head += tr(" — compared with <b>%1</b>").arg(run_label(*other_).toHtmlEscaped());
  headline_->setText(head);
  auto* content = new QWidget;
  auto* grid = new QGridLayout(content);
  grid->setColumnStretch(0, 1);
  grid->setColumnStretch(1, 1);
  int cell = 0;
  auto add = [&](QWidget* w, bool wide = false) {
    if (!w) return;
    if (wide && cell % 2) ++cell;
    grid->addWidget(w, cell / 2, cell % 2, 1, wide ? 2 : 1);
    cell += wide ? 2 : 1;
  };
  // Compared runs: the two charts that draw both are full width, their legends at the right.
  add(build_throughput(), other_.has_value());
  add(build_au(), other_.has_value());
  add(build_latency());
  add(build_au_per_accelerator());
  add(build_block());
  const json& utilization = object_at(*report_, "utilization");
  if (utilization.contains("resources")) {
    heat_map_ = new HeatMap;
    heat_map_->set_utilization(utilization);
    add(heat_map_, true);
  }
  add(build_kinds());
  add(build_utilization_tables());
  add(build_recovery_pgs());
  add(build_recovery_rate());
  add(build_expectations(), true);
  add(build_summary());
  add(build_bounds());
  scroll_->setWidget(content);
  update_buttons();
}

QWidget* ResultsView::build_throughput() {
  std::vector<Throughput> per_run;
  for (const json* r : runs()) per_run.push_back(throughput_of(*r));
  std::vector<TimeSeries> all;
  double top = 0;
  for (const Throughput& tp : per_run) {
    if (tp.y_title != per_run.front().y_title) continue;  // another unit: not on this chart
    for (const TimeSeries& s : tp.series) all.push_back(s);
    if (tp.bound) top = std::max(top, *tp.bound);
  }
  if (max_time(all) <= 0 || all.empty() || all.front().t_s.empty()) return nullptr;
  QChartView* view = new_chart_view(tr("Throughput over time"));
  QChart* chart = view->chart();
  const double t_max = max_time(all);
  auto* x = add_value_axis(chart, Qt::AlignBottom, tr("time (s)"), 0, t_max);
  auto* y = add_value_axis(chart, Qt::AlignLeft, per_run.front().y_title, 0,
                           nice_ceiling(std::max(top, max_value(all))));
  const bool compare = per_run.size() > 1;
  int color = 0;
  for (size_t i = 0; i < per_run.size(); ++i) {
    if (per_run[i].y_title != per_run.front().y_title) continue;
    const QString label = run_label(*runs()[i]);
    for (const TimeSeries& s : per_run[i].series) {
      if (s.t_s.empty()) continue;
      add_line(chart, s, compare ? label + ": " + s.name : s.name, x, y, palette_color(color++));
    }
    if (per_run[i].bound) {
      add_reference_line(chart, *per_run[i].bound, 0, t_max,
                         compare ? label + ": " + per_run[i].bound_label : per_run[i].bound_label,
                         x, y, i == 0 ? QColor(90, 90, 90) : QColor(150, 110, 60));
    }
  }
  int first_row = 0;
  for (const json* r : runs()) {
    const auto events = failure_events_of(*r);
    add_failure_markers(chart, events, x, y, first_row);
    first_row += static_cast<int>(events.size());
  }
  if (compare) chart->legend()->setAlignment(Qt::AlignRight);  // long names: one a line
  throughput_ = chart;
  return view;
}

QWidget* ResultsView::build_au() {
  std::vector<std::pair<const json*, const json*>> with_au;  // report, its series
  for (const json* r : runs()) {
    const json& s = object_at(*r, "series");
    if (s.contains("accelerator_utilization_windowed") || s.contains("accelerator_utilization")) {
      with_au.emplace_back(r, &s);
    }
  }
  if (with_au.empty()) return nullptr;
  QChartView* view = new_chart_view(tr("Accelerator utilization over time"));
  QChart* chart = view->chart();
  std::vector<TimeSeries> all;
  for (const auto& [r, s] : with_au) all.push_back(series_of(*s, "accelerator_utilization", ""));
  const double t_max = max_time(all);
  auto* x = add_value_axis(chart, Qt::AlignBottom, tr("time (s)"), 0, t_max);
  // Up to 1.1: room above AU 1 for the failure markers' labels.
  auto* y = add_value_axis(chart, Qt::AlignLeft, tr("AU (fraction, 0..1)"), 0, 1.1);
  const bool compare = runs().size() > 1;
  int color = 0;
  for (const auto& [r, s] : with_au) {
    const QString prefix = compare ? run_label(*r) + ": " : QString();
    const QColor c = palette_color(color++);
    add_line(chart, series_of(*s, "accelerator_utilization_windowed", "windowed"),
             prefix + tr("windowed AU"), x, y, c);
    add_line(chart, series_of(*s, "accelerator_utilization", "cumulative"),
             prefix + tr("cumulative MLPerf AU"), x, y, c.darker(140), Qt::DashDotLine);
    const auto threshold =
        number_at(object_at(object_at(*r, "summary"), "accelerator_utilization"), "threshold");
    if (threshold && r == with_au.front().first) {
      add_reference_line(chart, *threshold, 0, t_max,
                         tr("AU threshold %1").arg(*threshold, 0, 'g', 3), x, y,
                         QColor(90, 90, 90));
    }
  }
  add_failure_markers(chart, failure_events_of(*with_au.front().first), x, y);
  if (compare) chart->legend()->setAlignment(Qt::AlignRight);
  au_ = chart;
  return view;
}

QWidget* ResultsView::build_latency() {
  std::vector<std::pair<QString, const json*>> ops;  // name, latency object with a cdf
  auto collect = [&ops](const json& latency, const QString& prefix) {
    for (const char* op : {"read", "write"}) {
      const json& l = object_at(latency, op);
      if (object_at(l, "cdf").contains("ms")) ops.emplace_back(prefix + op, &l);
    }
  };
  collect(object_at(*report_, "latency_ms"), "");
  collect(object_at(object_at(*report_, "block"), "latency_ms"), "block ");
  if (ops.empty()) return nullptr;
  double lo = INFINITY, hi = 0;
  for (const auto& [name, l] : ops) {
    for (const json& v : (*l)["cdf"]["ms"]) {
      if (!v.is_number()) continue;
      lo = std::min(lo, v.get<double>());
      hi = std::max(hi, v.get<double>());
    }
  }
  QChartView* view = new_chart_view(tr("Latency distribution (CDF)"));
  QChart* chart = view->chart();
  const bool log = lo > 0 && hi / lo > 100;
  QAbstractAxis* x = nullptr;
  if (log) {
    auto* axis = new QLogValueAxis;
    axis->setBase(10);
    axis->setLabelFormat("%g");
    axis->setMinorTickCount(8);
    axis->setRange(std::pow(10, std::floor(std::log10(lo))),
                   std::pow(10, std::ceil(std::log10(hi))));
    axis->setTitleText(tr("latency (ms, log scale)"));
    chart->addAxis(axis, Qt::AlignBottom);
    x = axis;
  } else {
    // A narrow distribution (a checkpoint's ranks) is drawn over its own range, not from 0.
    const double pad = std::max((hi - lo) * 0.1, hi * 1e-3);
    const double from = hi - lo < 0.3 * hi ? std::max(0.0, lo - pad) : 0.0;
    x = add_value_axis(chart, Qt::AlignBottom, tr("latency (ms)"), from, hi + pad);
  }
  // Up to 110: room above 100 % for the p99 label.
  auto* y = add_value_axis(chart, Qt::AlignLeft, tr("operations at or below (%)"), 0, 110);
  int color = 0;
  for (const auto& [name, l] : ops) {
    const json& cdf = (*l)["cdf"];
    TimeSeries s;  // x: ms, y: percent
    s.name = name;
    for (size_t i = 0; i < cdf["ms"].size() && i < cdf["percent"].size(); ++i) {
      s.t_s.push_back(cdf["ms"][i].get<double>());
      s.values.push_back(cdf["percent"][i].get<double>());
    }
    const QColor c = palette_color(color++);
    add_line(chart, s, name, x, y, c);
    if (const auto p99 = number_at(*l, "p99")) {
      auto* mark = new QScatterSeries;
      mark->setObjectName("p99:" + name);
      mark->setName(ops.size() == 1
                        ? tr("%1 p99 = %2 ms").arg(name).arg(*p99, 0, 'g', 4)
                        : tr("p99 %1 ms")  // legend room
                              .arg(*p99, 0, *p99 >= 100 ? 'f' : 'g', *p99 >= 100 ? 0 : 3));
      mark->setMarkerSize(9);
      mark->setColor(c.darker(130));
      mark->append(*p99, 99);
      mark->setPointLabelsVisible(ops.size() == 1);  // several: in the legend only
      mark->setPointLabelsFormat("p99 @xPoint ms");
      mark->setPointLabelsClipping(false);
      chart->addSeries(mark);
      mark->attachAxis(x);
      mark->attachAxis(y);
    }
  }
  latency_ = chart;
  return view;
}

QWidget* ResultsView::build_au_per_accelerator() {
  const json& acc = object_at(*report_, "accelerators");
  if (!acc.contains("utilization") || !acc["utilization"].is_array() ||
      acc["utilization"].empty()) {
    return nullptr;
  }
  const json& au = acc["utilization"];
  const int per_node = std::max(1, acc.value("per_node", 1));
  QChartView* view = new_chart_view(QString());
  QChart* chart = view->chart();
  auto* set = new QBarSet(tr("accelerators"));
  QStringList categories;
  auto* axis_x = new QBarCategoryAxis;
  double top = 1;
  if (static_cast<int>(au.size()) <= kMaxBars) {
    chart->setTitle(
        tr("MLPerf AU per accelerator (%1 simulated, %2 a node)").arg(au.size()).arg(per_node));
    set->setLabel(tr("MLPerf AU"));
    for (size_t i = 0; i < au.size(); ++i) {
      *set << (au[i].is_number() ? au[i].get<double>() : 0.0);
      categories << (au.size() > 16 ? QString::number(i)
                                    : QString("%1.%2")
                                          .arg(static_cast<int>(i) / per_node)
                                          .arg(static_cast<int>(i) % per_node));
    }
    axis_x->setTitleText(au.size() > 16 ? tr("accelerator (0 to %1)").arg(au.size() - 1)
                                        : tr("accelerator (node.index)"));
  } else {
    chart->setTitle(tr("MLPerf AU per accelerator: histogram of %1 simulated").arg(au.size()));
    set->setLabel(tr("accelerators per bin"));
    // Ten bins: few enough that Qt Charts draws every label (it elides them past 16).
    std::vector<int> bins(10, 0);
    for (const json& v : au) {
      const double a = v.is_number() ? v.get<double>() : 0.0;
      ++bins[static_cast<size_t>(std::clamp(static_cast<int>(a * 10), 0, 9))];
    }
    for (size_t b = 0; b < bins.size(); ++b) {
      *set << bins[b];
      top = std::max(top, nice_ceiling(bins[b]));
      categories << QString::number(b * 0.1, 'f', 1);
    }
    axis_x->setTitleText(
        tr("MLPerf AU (fraction; bins of 0.1 from the value shown, 1 in the last)"));
  }
  auto* bars = new QBarSeries;
  bars->setObjectName("data:accelerators.utilization");
  bars->append(set);
  bars->setBarWidth(0.8);
  chart->addSeries(bars);
  axis_x->append(categories);
  // Past 16 bars Qt Charts elides the labels to "…", and then the axis title too: neither is
  // drawn, the chart's title says the order.
  if (categories.size() > 16) {
    axis_x->setLabelsVisible(false);
    axis_x->setTitleVisible(false);
    chart->setTitle(tr("MLPerf AU per accelerator: %1 simulated, 0 to %2 left to right, %3 a node")
                        .arg(au.size())
                        .arg(au.size() - 1)
                        .arg(per_node));
  }
  chart->addAxis(axis_x, Qt::AlignBottom);
  bars->attachAxis(axis_x);
  const bool histogram = static_cast<int>(au.size()) > kMaxBars;
  auto* y = add_value_axis(
      chart, Qt::AlignLeft,
      histogram ? tr("accelerators (count)") : tr("MLPerf AU (fraction, 0..1)"), 0, top);
  bars->attachAxis(y);
  chart->legend()->setVisible(false);
  au_per_accelerator_ = chart;
  return view;
}

QWidget* ResultsView::build_block() {
  const auto iops = mixed_block_iops_of(*report_);
  if (!iops) return nullptr;
  QChartView* view = new_chart_view(tr("Block I/O beside the workload"));
  QChart* chart = view->chart();
  auto* x = add_value_axis(chart, Qt::AlignBottom, tr("time (s)"), 0, max_time({*iops}));
  auto* y = add_value_axis(chart, Qt::AlignLeft, tr("I/O rate (IOPS)"), 0,
                           nice_ceiling(max_value({*iops})));
  add_line(chart, *iops, iops->name + tr(" IOPS"), x, y, palette_color(2));
  add_failure_markers(chart, failure_events_of(*report_), x, y);
  block_ = chart;
  return view;
}

QWidget* ResultsView::build_kinds() {
  const json& u = object_at(*report_, "utilization");
  const json& kinds = object_at(u, "kinds");
  if (kinds.empty() || !u.contains("t_s")) return nullptr;
  QChartView* view = new_chart_view(tr("Mean busy fraction per resource kind"));
  QChart* chart = view->chart();
  json axis = json::object();
  axis["t_s"] = u["t_s"];
  std::vector<TimeSeries> all;
  for (const auto& [kind, k] : kinds.items()) {
    axis["v"] = k.value("series_mean", json::array());
    all.push_back(series_of(axis, "v", QString::fromStdString(kind)));
  }
  auto* x = add_value_axis(chart, Qt::AlignBottom, tr("time (s)"), 0, max_time(all));
  auto* y = add_value_axis(chart, Qt::AlignLeft, tr("mean busy fraction (0..1)"), 0, 1.1);
  int color = 0;
  for (const TimeSeries& s : all) {
    const json& k = kinds[s.name.toStdString()];
    add_line(chart, s, tr("%1 (%2)").arg(s.name).arg(k.value("resources", 0)), x, y,
             palette_color(color++));
  }
  add_failure_markers(chart, failure_events_of(*report_), x, y);
  chart->legend()->setAlignment(Qt::AlignRight);  // seven kinds do not fit under it
  kinds_ = chart;
  return view;
}

QWidget* ResultsView::build_utilization_tables() {
  const json& u = object_at(*report_, "utilization");
  if (u.empty()) return nullptr;
  const json& sat = object_at(u, "saturated");
  saturated_ = new_table({tr("resource"), tr("kind"), tr("saturated at (s)"), tr("mean busy")});
  for (const json& r : sat.value("first", json::array())) {
    add_row(saturated_, {QString::fromStdString(r.value("name", "")),
                         QString::fromStdString(r.value("kind", "")),
                         text_of(r.value("at_s", json())), text_of(r.value("mean", json()))});
  }
  busiest_ = new_table({tr("resource"), tr("kind"), tr("mean busy (fraction)")});
  for (const json& r : u.value("busiest", json::array())) {
    add_row(busiest_,
            {QString::fromStdString(r.value("name", "")),
             QString::fromStdString(r.value("kind", "")), text_of(r.value("mean", json()))});
  }
  auto* box = new QWidget;
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(section(tr("Saturated first (busy ≥ %1 of an interval; %2 resources saturated)")
                                .arg(text_of(sat.value("threshold", json())))
                                .arg(text_of(sat.value("count", json()))),
                            saturated_));
  layout->addWidget(section(tr("Busiest resources (mean over the run)"), busiest_));
  return box;
}

QWidget* ResultsView::build_recovery_pgs() {
  const json& series = object_at(object_at(*report_, "recovery"), "series");
  if (!series.contains("t_s")) return nullptr;
  QChartView* view = new_chart_view(tr("Recovery: placement groups and bytes remaining"));
  QChart* chart = view->chart();
  std::vector<TimeSeries> pgs = {series_of(series, "degraded_pgs", "degraded_pgs"),
                                 series_of(series, "inactive_pgs", "inactive_pgs"),
                                 series_of(series, "misplaced_pgs", "misplaced_pgs")};
  TimeSeries bytes = series_of(series, "bytes_remaining", "bytes_remaining");
  for (double& b : bytes.values) b /= 1073741824.0;  // GiB
  const double t_max = std::max(max_time(pgs), max_time({bytes}));
  auto* x = add_value_axis(chart, Qt::AlignBottom, tr("time (s)"), 0, t_max);
  auto* y = add_value_axis(chart, Qt::AlignLeft, tr("placement groups (count)"), 0,
                           nice_ceiling(std::max(1.0, max_value(pgs))));
  auto* y2 = add_value_axis(chart, Qt::AlignRight, tr("bytes remaining (GiB)"), 0,
                            nice_ceiling(std::max(1.0, max_value({bytes}))));
  const QStringList names = {tr("degraded PGs"), tr("inactive PGs"), tr("misplaced PGs")};
  for (size_t i = 0; i < pgs.size(); ++i) {
    if (!pgs[i].t_s.empty())
      add_line(chart, pgs[i], names[static_cast<int>(i)], x, y, palette_color(static_cast<int>(i)));
  }
  if (!bytes.t_s.empty()) {
    add_line(chart, bytes, tr("bytes remaining (GiB, right axis)"), x, y2, QColor(60, 60, 60),
             Qt::DashDotLine);
  }
  add_failure_markers(chart, failure_events_of(*report_), x, y);
  recovery_pgs_ = chart;
  return view;
}

QWidget* ResultsView::build_recovery_rate() {
  const json& series = object_at(object_at(*report_, "recovery"), "series");
  if (!series.contains("recovery_gibps")) return nullptr;
  QChartView* view = new_chart_view(tr("Recovery write throughput"));
  QChart* chart = view->chart();
  const TimeSeries s = series_of(series, "recovery_gibps", "recovery_gibps");
  auto* x = add_value_axis(chart, Qt::AlignBottom, tr("time (s)"), 0, max_time({s}));
  auto* y = add_value_axis(chart, Qt::AlignLeft, tr("recovery writes (GiB/s)"), 0,
                           nice_ceiling(std::max(1e-3, max_value({s}))));
  add_line(chart, s, tr("recovery writes"), x, y, palette_color(5));
  add_failure_markers(chart, failure_events_of(*report_), x, y);
  recovery_rate_ = chart;
  return view;
}

QWidget* ResultsView::build_summary() {
  QStringList headers = {tr("summary key")};
  for (const json* r : runs()) headers << (other_ ? run_label(*r) : tr("value"));
  summary_ = new_table(headers);
  summary_->setMinimumHeight(420);
  std::vector<std::vector<std::pair<std::string, json>>> flat(runs().size());
  for (size_t i = 0; i < runs().size(); ++i)
    flatten("", object_at(*runs()[i], "summary"), &flat[i]);
  // Rows: the first run's keys in its order, then keys only the other run has.
  std::vector<std::string> keys;
  for (const auto& f : flat) {
    for (const auto& [k, v] : f) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
  }
  for (const std::string& k : keys) {
    QStringList cells = {QString::fromStdString(k)};
    for (const auto& f : flat) {
      const auto it =
          std::find_if(f.begin(), f.end(), [&k](const auto& p) { return p.first == k; });
      cells << (it == f.end() ? QString() : text_of(it->second));
    }
    add_row(summary_, cells);
  }
  return section(other_ ? tr("Summary of both runs") : tr("Summary"), summary_);
}

QWidget* ResultsView::build_bounds() {
  const json& b = object_at(*report_, "bounds");
  if (b.empty()) return nullptr;
  bounds_ = new_table({tr("bound"), tr("value")});
  std::vector<std::pair<std::string, json>> flat;
  for (const auto& [k, v] : b.items()) {
    if (k != "ceilings") flatten(k, v, &flat);
  }
  for (const auto& [k, v] : flat) {
    QString value = text_of(v);
    if (v.is_array()) {
      QStringList parts;
      for (const json& e : v) parts << text_of(e);
      value = parts.join("; ");
    }
    add_row(bounds_, {QString::fromStdString(k), value});
  }
  auto* box = new QWidget;
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(section(tr("Bounds (analytic)"), bounds_));
  if (b.contains("ceilings") && b["ceilings"].is_array()) {
    ceilings_ = new_table({tr("ceiling"), tr("GiB/s"), tr("files/s"), tr("detail")});
    for (const json& c : b["ceilings"]) {
      add_row(
          ceilings_,
          {QString::fromStdString(c.value("resource", "")), text_of(c.value("gibps", json())),
           text_of(c.value("files_per_s", json())), QString::fromStdString(c.value("detail", ""))});
    }
    layout->addWidget(section(tr("Ceilings of the read, lowest first"), ceilings_));
  }
  return box;
}

QWidget* ResultsView::build_expectations() {
  const json e = report_->value("expectations", json());
  if (!e.is_array() || e.empty()) return nullptr;
  expectations_ = new_table(
      {tr("result"), tr("name"), tr("metric"), tr("condition"), tr("measured"), tr("message")});
  int passed = 0;
  for (const json& x : e) {
    const bool ok = x.value("passed", false);
    passed += ok ? 1 : 0;
    add_row(expectations_,
            {ok ? tr("PASS") : tr("FAIL"), QString::fromStdString(x.value("name", "")),
             QString::fromStdString(x.value("metric", "")),
             QString::fromStdString(x.value("condition", "")), text_of(x.value("measured", json())),
             QString::fromStdString(x.value("message", ""))});
    QTableWidgetItem* result = expectations_->item(expectations_->rowCount() - 1, 0);
    result->setBackground(ok ? QColor(200, 230, 201) : QColor(255, 205, 210));
    result->setForeground(ok ? QColor(27, 94, 32) : QColor(183, 28, 28));
    QFont f = result->font();
    f.setBold(true);
    result->setFont(f);
  }
  const int height = std::min(40 + 32 * static_cast<int>(e.size()), 300);
  expectations_->setMinimumHeight(height);
  expectations_->setMaximumHeight(height);
  return section(tr("Expectations: %1 of %2 passed").arg(passed).arg(e.size()), expectations_);
}

}  // namespace granary::gui
