// Chart building blocks (charts.h).
#include "gui/charts.h"

#include <QGraphicsSimpleTextItem>
#include <QHeaderView>
#include <QLabel>
#include <QLegendMarker>
#include <QPen>
#include <QPointer>
#include <QVBoxLayout>
#include <cmath>

namespace granary::gui {

namespace {

const QColor kEventColor(183, 28, 28);
const QColor kLightEventColor(239, 154, 154);

}  // namespace

void add_vertical_marker(QChart* chart, double t, const QString& object_name, const QString& label,
                         const QColor& color, Qt::PenStyle style, int label_row, QAbstractAxis* x,
                         QValueAxis* y) {
  auto* line = new QLineSeries;
  line->setObjectName(object_name);
  line->append(t, y->min());
  line->append(t, y->max());
  QPen pen(color, 1.5, style);
  line->setPen(pen);
  chart->addSeries(line);
  line->attachAxis(x);
  line->attachAxis(y);
  for (QLegendMarker* m : chart->legend()->markers(line)) m->setVisible(false);
  if (label.isEmpty()) return;
  auto* text = new QGraphicsSimpleTextItem(label, chart);
  text->setBrush(color.darker(style == Qt::SolidLine ? 100 : 150));
  QFont font = text->font();
  font.setPointSizeF(font.pointSizeF() * 0.85);
  text->setFont(font);
  text->setZValue(10);
  QPointer<QLineSeries> guard(line);
  auto place = [chart, text, guard, t, label_row, y] {
    if (!guard) return;
    const QPointF top = chart->mapToPosition(QPointF(t, y->max()), guard);
    text->setPos(top.x() + 3, top.y() + 2 + label_row * (text->boundingRect().height() + 1));
  };
  QObject::connect(chart, &QChart::plotAreaChanged, line, place);
  place();
}

QChartView* new_chart_view(const QString& title) {
  auto* chart = new QChart;
  chart->setTitle(title);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(4, 4, 4, 4));
  auto* view = new QChartView(chart);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumHeight(330);
  return view;
}

QValueAxis* add_value_axis(QChart* chart, Qt::Alignment alignment, const QString& title, double min,
                           double max) {
  auto* axis = new QValueAxis;
  axis->setTitleText(title);
  axis->setRange(min, max);
  // Ticks at round numbers from 0 (a range ending at 36.6 s has ticks every 5 s, not 7.31).
  const double raw = (max - min) / 6;
  double step = raw > 0 ? std::pow(10.0, std::floor(std::log10(raw))) : 1.0;
  for (double f : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (raw > 0 && f * std::pow(10.0, std::floor(std::log10(raw))) >= raw) {
      step = f * std::pow(10.0, std::floor(std::log10(raw)));
      break;
    }
  }
  axis->setTickType(QValueAxis::TicksDynamic);
  axis->setTickAnchor(0);
  axis->setTickInterval(step);
  axis->setLabelFormat(max >= 1e4 ? "%.0f" : "%.4g");  // 3000000 IOPS, not 3e+06
  chart->addAxis(axis, alignment);
  return axis;
}

QLineSeries* add_line(QChart* chart, const TimeSeries& s, const QString& name, QAbstractAxis* x,
                      QAbstractAxis* y, const QColor& color, Qt::PenStyle style) {
  auto* line = new QLineSeries;
  line->setName(name);
  line->setObjectName("data:" + s.name);
  QList<QPointF> points;
  points.reserve(static_cast<qsizetype>(s.t_s.size()));
  for (size_t i = 0; i < s.t_s.size(); ++i) {
    // A null figure (no data in that interval) is drawn as 0 rather than dropped, so that the
    // series keeps the report's point count.
    points.append(QPointF(s.t_s[i], std::isfinite(s.values[i]) ? s.values[i] : 0.0));
  }
  line->replace(points);
  line->setPen(QPen(color, 2, style));
  chart->addSeries(line);
  line->attachAxis(x);
  line->attachAxis(y);
  return line;
}

QLineSeries* add_reference_line(QChart* chart, double y_value, double x0, double x1,
                                const QString& label, QAbstractAxis* x, QAbstractAxis* y,
                                const QColor& color) {
  auto* line = new QLineSeries;
  line->setName(label);
  line->setObjectName("ref:" + label);
  line->append(x0, y_value);
  line->append(x1, y_value);
  line->setPen(QPen(color, 1.5, Qt::DashLine));
  chart->addSeries(line);
  line->attachAxis(x);
  line->attachAxis(y);
  return line;
}

void add_failure_markers(QChart* chart, const std::vector<FailureEvent>& events, QValueAxis* x,
                         QValueAxis* y, int first_row) {
  int row = first_row;
  for (const FailureEvent& e : events) {
    add_vertical_marker(chart, e.at_s, "marker:" + e.kind, e.kind, kEventColor, Qt::SolidLine,
                        row % 3, x, y);
    if (e.marked_out_at_s) {
      add_vertical_marker(chart, *e.marked_out_at_s, "marker-light:out", "out", kLightEventColor,
                          Qt::DashLine, row % 3, x, y);
    }
    if (e.marked_up_at_s) {
      add_vertical_marker(chart, *e.marked_up_at_s, "marker-light:up", "up", kLightEventColor,
                          Qt::DashLine, row % 3, x, y);
    }
    ++row;
  }
}

double max_value(const std::vector<TimeSeries>& series) {
  double m = 0;
  for (const TimeSeries& s : series) {
    for (double v : s.values) {
      if (std::isfinite(v)) m = std::max(m, v);
    }
  }
  return m;
}

double max_time(const std::vector<TimeSeries>& series) {
  double m = 0;
  for (const TimeSeries& s : series) {
    if (!s.t_s.empty()) m = std::max(m, s.t_s.back());
  }
  return m > 0 ? m : 1.0;
}

double nice_ceiling(double v) {
  if (!(v > 0) || !std::isfinite(v)) return 1.0;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  // Headroom above the data for the failure markers' labels.
  for (double f : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0}) {
    if (f * p >= v * 1.12) return f * p;
  }
  return 10 * p;
}

QTableWidget* new_table(const QStringList& headers) {
  auto* t = new QTableWidget(0, static_cast<int>(headers.size()));
  t->setHorizontalHeaderLabels(headers);
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  t->horizontalHeader()->setStretchLastSection(true);
  t->verticalHeader()->setVisible(false);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setAlternatingRowColors(true);
  t->setWordWrap(false);
  t->setMinimumHeight(220);
  return t;
}

void add_row(QTableWidget* t, const QStringList& cells) {
  const int row = t->rowCount();
  t->insertRow(row);
  for (int c = 0; c < cells.size(); ++c) t->setItem(row, c, new QTableWidgetItem(cells[c]));
}

QWidget* section(const QString& title, QWidget* content) {
  auto* box = new QWidget;
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* label = new QLabel("<b>" + title.toHtmlEscaped() + "</b>");
  layout->addWidget(label);
  layout->addWidget(content, 1);
  return box;
}

QColor palette_color(int n) {
  // Okabe-Ito, without black and yellow (hard to see on white).
  static const QColor colors[] = {QColor(0, 114, 178),   QColor(230, 159, 0),  QColor(0, 158, 115),
                                  QColor(204, 121, 167), QColor(86, 180, 233), QColor(213, 94, 0)};
  return colors[n % 6];
}

}  // namespace granary::gui
