// The sweep view (sweep_view.h).
#include "gui/sweep_view.h"

#include <QFont>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLogValueAxis>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "gui/charts.h"

namespace granary::gui {

namespace {

const QColor kSaturationColor(183, 28, 28);
const QColor kReferenceColor(120, 120, 120);

// The sweep's points as a series of `field` against the swept value.
TimeSeries series_of(const Sweep& s, const QString& name, double SweepPoint::*field) {
  TimeSeries out{name, {}, {}};
  for (const SweepPoint& p : s.points) {
    out.t_s.push_back(p.value);
    out.values.push_back(p.*field);
  }
  return out;
}

const SweepPoint* point_at(const Sweep& s, std::optional<int> value) {
  if (!value) return nullptr;
  for (const SweepPoint& p : s.points) {
    if (p.value == *value) return &p;
  }
  return nullptr;
}

QString percent(double fraction) {
  return QString::number(100 * fraction, 'f', 0) + "%";
}

// The saturation line: where AU falls below the threshold, where throughput stops growing,
// what limits the read there.
QString saturation_line(const Sweep& s) {
  const QString what = sweep_axis_title(s.parameter);
  const QString threshold = QString::number(s.au_threshold, 'f', 2);
  QStringList parts;
  if (s.au_below_threshold_at) {
    const SweepPoint* p = point_at(s, s.au_below_threshold_at);
    parts << QObject::tr("AU falls below %1 at %2 %3%4")
                 .arg(threshold)
                 .arg(*s.au_below_threshold_at)
                 .arg(what, p ? QObject::tr(" (%1 accelerators, AU %2)")
                                    .arg(p->accelerators)
                                    .arg(p->accelerator_utilization, 0, 'f', 3)
                              : QString());
  } else {
    parts << QObject::tr("AU stays at or above %1 at every point, up to %2 %3")
                 .arg(threshold)
                 .arg(s.points.back().value)
                 .arg(what);
  }
  if (s.throughput_plateau_at) {
    parts
        << QObject::tr("throughput stops growing at %1 %2").arg(*s.throughput_plateau_at).arg(what);
  } else {
    parts << QObject::tr("throughput grows at every step");
  }
  QString text = "<b>" + QObject::tr("Saturation") + "</b>: " + parts.join("; ").toHtmlEscaped();
  if (!s.limited_by.isEmpty()) {
    text += QObject::tr(". Limited there by %1.").arg(s.limited_by.toHtmlEscaped());
  } else {
    text += ".";
  }
  return text;
}

}  // namespace

SweepView::SweepView(QWidget* parent) : QWidget(parent) {
  parameter_ = new QComboBox;
  parameter_->addItem(sweep_axis_title(SweepParameter::kClientNodes),
                      static_cast<int>(SweepParameter::kClientNodes));
  parameter_->addItem(sweep_axis_title(SweepParameter::kAcceleratorsPerNode),
                      static_cast<int>(SweepParameter::kAcceleratorsPerNode));
  parameter_->setItemData(0, sweep_key(SweepParameter::kClientNodes), Qt::ToolTipRole);
  parameter_->setItemData(1, sweep_key(SweepParameter::kAcceleratorsPerNode), Qt::ToolTipRole);
  values_ = new QLineEdit;
  values_->setPlaceholderText(tr("ascending values, e.g. 8, 16, 32, 64"));
  values_->setMinimumWidth(160);
  values_error_ = new QLabel;
  values_error_->setStyleSheet("color: #b71c1c");
  run_ = new QPushButton(tr("Run Sweep"));
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setEnabled(false);
  open_ = new QPushButton(tr("Open Sweep…"));
  headline_ = new QLabel;
  headline_->setWordWrap(true);
  headline_->setTextFormat(Qt::RichText);
  saturation_ = new QLabel;
  saturation_->setWordWrap(true);
  saturation_->setTextFormat(Qt::RichText);
  saturation_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Sweep")));
  controls->addWidget(parameter_);
  controls->addWidget(new QLabel(tr("over")));
  controls->addWidget(values_, 1);
  controls->addWidget(run_);
  controls->addWidget(cancel_);
  controls->addWidget(open_);
  scroll_ = new QScrollArea;
  scroll_->setWidgetResizable(true);
  scroll_->setFrameShape(QFrame::NoFrame);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 0);
  layout->addLayout(controls);
  layout->addWidget(values_error_);
  layout->addWidget(headline_);
  layout->addWidget(saturation_);
  layout->addWidget(scroll_, 1);

  connect(parameter_, &QComboBox::currentIndexChanged, this, [this] {
    values_typed_ = false;
    apply_defaults();
  });
  connect(values_, &QLineEdit::textEdited, this, [this] {
    values_typed_ = true;
    check_values();
  });
  connect(run_, &QPushButton::clicked, this, &SweepView::request_run);
  connect(values_, &QLineEdit::returnPressed, this, &SweepView::request_run);
  connect(cancel_, &QPushButton::clicked, this, [this] { emit cancel_requested(); });
  connect(open_, &QPushButton::clicked, this, [this] { emit open_requested(); });
  apply_defaults();
  set_message(
      tr("No sweep yet: Run Sweep simulates the scenario's read storm at each value "
         "(granary plan sweep), Open Sweep… shows a sweep file."));
}

void SweepView::request_run() {
  if (running_) return;
  auto v = values();
  if (v.ok()) emit run_requested(parameter(), *v);
}

void SweepView::set_scenario_sizes(int client_nodes, int accelerators_per_node) {
  client_nodes_ = client_nodes;
  accelerators_per_node_ = accelerators_per_node;
  apply_defaults();
}

void SweepView::apply_defaults() {
  if (values_typed_) return;
  values_->setText(sweep_values_text(default_sweep_values(
      parameter() == SweepParameter::kClientNodes ? client_nodes_ : accelerators_per_node_)));
  check_values();
}

void SweepView::set_parameter(SweepParameter p) {
  parameter_->setCurrentIndex(parameter_->findData(static_cast<int>(p)));
}

SweepParameter SweepView::parameter() const {
  return static_cast<SweepParameter>(parameter_->currentData().toInt());
}

Result<std::vector<int>> SweepView::values() const {
  auto v = parse_sweep_values(values_->text());
  if (!v.ok()) return Status::invalid_argument("sweep values: " + v.status().message());
  return v;
}

void SweepView::set_values(const std::vector<int>& values) {
  values_typed_ = true;
  values_->setText(sweep_values_text(values));
  check_values();
}

void SweepView::check_values() {
  const auto v = values();
  values_error_->setText(v.ok() ? QString() : QString::fromStdString(v.status().message()));
  values_error_->setVisible(!v.ok());
  run_->setEnabled(v.ok() && !running_);
}

void SweepView::set_running(bool running) {
  running_ = running;
  parameter_->setEnabled(!running);
  values_->setEnabled(!running);
  open_->setEnabled(!running);
  cancel_->setEnabled(running);
  check_values();
}

void SweepView::set_message(const QString& message) {
  sweep_.reset();
  headline_->setText(message.toHtmlEscaped());
  saturation_->clear();
  saturation_->setVisible(false);
  throughput_ = au_ = nullptr;
  table_ = nullptr;
  auto* empty = new QWidget;
  scroll_->setWidget(empty);
}

bool SweepView::set_sweep(const nlohmann::json& sweep, const QString& headline, QString* error) {
  auto s = sweep_of(sweep);
  if (!s.ok()) {
    if (error) *error = QString::fromStdString(s.status().message());
    return false;
  }
  show_sweep(std::move(s).value(), headline);
  return true;
}

void SweepView::show_sweep(Sweep sweep, const QString& headline) {
  sweep_ = std::move(sweep);
  // The controls show what was swept, so that Run Sweep sweeps it again.
  std::vector<int> values;
  for (const SweepPoint& p : sweep_->points) values.push_back(p.value);
  set_parameter(sweep_->parameter);
  set_values(values);
  const QString seed = sweep_->seed.isEmpty() ? QString() : tr(" (seed %1)").arg(sweep_->seed);
  headline_->setText("<b>" +
                     tr("Sweep of %1%2 over %3: %4 points")
                         .arg(sweep_->scenario_name, seed)
                         .arg(sweep_axis_title(sweep_->parameter))
                         .arg(sweep_->points.size())
                         .toHtmlEscaped() +
                     "</b>" + (headline.isEmpty() ? QString() : " — " + headline.toHtmlEscaped()));
  saturation_->setText(saturation_line(*sweep_));
  saturation_->setVisible(true);
  rebuild();
}

void SweepView::rebuild() {
  throughput_ = au_ = nullptr;
  table_ = nullptr;
  auto* content = new QWidget;
  auto* grid = new QGridLayout(content);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->addWidget(build_throughput(), 0, 0);
  grid->addWidget(build_au(), 0, 1);
  grid->addWidget(build_table(), 1, 0, 1, 2);
  grid->setRowStretch(2, 1);
  scroll_->setWidget(content);
}

QAbstractAxis* SweepView::add_x_axis(QChart* chart) const {
  const double first = sweep_->points.front().value;
  const double last = sweep_->points.back().value;
  const QString title = sweep_axis_title(sweep_->parameter);
  if (last >= 8 * first) {
    auto* axis = new QLogValueAxis;
    axis->setBase(2);
    axis->setTitleText(title + tr(" (log2 scale)"));
    axis->setLabelFormat("%g");
    // A little room beyond the first and last points; the labels stay at powers of two.
    axis->setRange(first / std::exp2(0.15), last * std::exp2(0.15));
    axis->setMinorTickCount(0);
    chart->addAxis(axis, Qt::AlignBottom);
    return axis;
  }
  // A linear axis from 0 with room to the right of the last point.
  return add_value_axis(chart, Qt::AlignBottom, title, 0, nice_ceiling(last));
}

QWidget* SweepView::build_throughput() {
  QChartView* view =
      new_chart_view(tr("Read throughput vs %1").arg(sweep_axis_title(sweep_->parameter)));
  throughput_ = view->chart();
  const TimeSeries read = series_of(*sweep_, "read_gibps", &SweepPoint::read_gibps);
  const TimeSeries demand = series_of(*sweep_, "demand_gibps", &SweepPoint::demand_gibps);
  const TimeSeries bound = series_of(*sweep_, "read_bound_gibps", &SweepPoint::read_bound_gibps);
  auto* x = add_x_axis(throughput_);
  auto* y = add_value_axis(throughput_, Qt::AlignLeft, tr("GiB/s"), 0,
                           nice_ceiling(max_value({read, demand, bound})));
  add_line(throughput_, read, tr("read (GiB/s)"), x, y, palette_color(0))->setPointsVisible(true);
  add_line(throughput_, demand, tr("demand at AU 1"), x, y, palette_color(1), Qt::DashLine);
  add_line(throughput_, bound, tr("analytic bound"), x, y, kReferenceColor, Qt::DashDotLine);
  if (sweep_->saturation_at) {
    add_vertical_marker(throughput_, *sweep_->saturation_at, "marker:saturation", tr("saturation"),
                        kSaturationColor, Qt::SolidLine, 0, x, y);
  }
  return view;
}

QWidget* SweepView::build_au() {
  QChartView* view =
      new_chart_view(tr("Accelerator utilization vs %1").arg(sweep_axis_title(sweep_->parameter)));
  au_ = view->chart();
  const TimeSeries au =
      series_of(*sweep_, "accelerator_utilization", &SweepPoint::accelerator_utilization);
  auto* x = add_x_axis(au_);
  // Up to 1.1: room above AU 1 for the marker's label.
  auto* y = add_value_axis(au_, Qt::AlignLeft, tr("AU (fraction, 0..1)"), 0, 1.1);
  add_line(au_, au, tr("mean AU"), x, y, palette_color(2))->setPointsVisible(true);
  add_reference_line(
      au_, sweep_->au_threshold, sweep_->points.front().value, sweep_->points.back().value,
      tr("threshold %1").arg(sweep_->au_threshold, 0, 'f', 2), x, y, kReferenceColor);
  if (sweep_->saturation_at) {
    add_vertical_marker(au_, *sweep_->saturation_at, "marker:saturation", tr("saturation"),
                        kSaturationColor, Qt::SolidLine, 0, x, y);
  }
  return view;
}

QWidget* SweepView::build_table() {
  // The swept column first, then the other size.
  const bool nodes = sweep_->parameter == SweepParameter::kClientNodes;
  const QString per_node = sweep_axis_title(SweepParameter::kAcceleratorsPerNode);
  const QString node_count = sweep_axis_title(SweepParameter::kClientNodes);
  table_ = new_table({(nodes ? node_count : per_node) + tr(" (swept)"),
                      nodes ? per_node : node_count, tr("accelerators"), tr("read (GiB/s)"),
                      tr("read is"), tr("demand (GiB/s)"), tr("bound (GiB/s)"), tr("binding"),
                      tr("AU"), tr("meets threshold"), tr("saturated resources"),
                      tr("saturated first"), tr("busiest kind (mean busy)"), tr("fidelity")});
  for (const SweepPoint& p : sweep_->points) {
    add_row(table_,
            {QString::number(p.value),
             QString::number(nodes ? p.accelerators / std::max(1, p.client_nodes) : p.client_nodes),
             QString::number(p.accelerators), QString::number(p.read_gibps, 'f', 2), p.read_of,
             QString::number(p.demand_gibps, 'f', 2), QString::number(p.read_bound_gibps, 'f', 2),
             p.binding, QString::number(p.accelerator_utilization, 'f', 3),
             p.meets_threshold ? tr("yes") : tr("no"), QString::number(p.saturated_count),
             p.saturated_first, p.busiest_kind + " (" + percent(p.busiest_kind_mean) + ")",
             p.fidelity});
    if (sweep_->saturation_at && p.value == *sweep_->saturation_at) {
      for (int c = 0; c < table_->columnCount(); ++c) {
        QFont f = table_->item(table_->rowCount() - 1, c)->font();
        f.setBold(true);
        table_->item(table_->rowCount() - 1, c)->setFont(f);
      }
    }
  }
  table_->setMinimumHeight(60 + 30 * static_cast<int>(sweep_->points.size()));
  return section(tr("Points (the saturation point in bold)"), table_);
}

}  // namespace granary::gui
