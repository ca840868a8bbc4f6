// Chart building blocks of the results and sweep views (Qt Charts): a chart with titled axes,
// line series from report series, a dashed horizontal reference line (a bound, a threshold),
// vertical markers (the failure timeline labelled by event kind, a sweep's saturation point);
// and their tables: a read-only table and a titled section around a widget.
//
// Conventions the tests rely on: every data series carries its report name as QObject name
// "data:<name>"; reference lines "ref:<label>"; failure markers "marker:<kind>" (the event)
// and "marker-light:<what>" (marked out / marked up), each a two-point vertical QLineSeries
// left out of the legend.
//
// Thread-safety: GUI thread only.
#pragma once

#include <QChart>
#include <QChartView>
#include <QColor>
#include <QLineSeries>
#include <QString>
#include <QStringList>
#include <QTableWidget>
#include <QValueAxis>
#include <vector>

#include "gui/report_data.h"

namespace granary::gui {

// A chart titled `title` with a legend at the bottom, in a view with antialiasing and a
// minimum height that keeps it readable.
QChartView* new_chart_view(const QString& title);
// A linear axis added to `chart` at `alignment` with its title (which holds the unit).
QValueAxis* add_value_axis(QChart* chart, Qt::Alignment alignment, const QString& title, double min,
                           double max);
// `s` as a line series named `name` on the axes given.
QLineSeries* add_line(QChart* chart, const TimeSeries& s, const QString& name, QAbstractAxis* x,
                      QAbstractAxis* y, const QColor& color, Qt::PenStyle style = Qt::SolidLine);
// A dashed horizontal line at `y_value` from x0 to x1, in the legend as `label`.
QLineSeries* add_reference_line(QChart* chart, double y_value, double x0, double x1,
                                const QString& label, QAbstractAxis* x, QAbstractAxis* y,
                                const QColor& color);
// A vertical line at x = `t` from the bottom to the top of `y`, named `object_name` and left out
// of the legend, with `label` (none when empty) at its top in row `label_row`, following the
// plot area when the chart is resized.
void add_vertical_marker(QChart* chart, double t, const QString& object_name, const QString& label,
                         const QColor& color, Qt::PenStyle style, int label_row, QAbstractAxis* x,
                         QValueAxis* y);
// Vertical markers for `events` from the bottom to the top of `y`: the event's time in dark
// red labelled with its kind, its marked-out and marked-up times lighter ("out", "up").
// Labels follow the plot area when the chart is resized; they stack in three lines, starting
// at `first_row` (another run's markers on the same chart start lower).
void add_failure_markers(QChart* chart, const std::vector<FailureEvent>& events, QValueAxis* x,
                         QValueAxis* y, int first_row = 0);

// The largest finite value of the series (0 when none).
double max_value(const std::vector<TimeSeries>& series);
// The last time of the series (1 when none).
double max_time(const std::vector<TimeSeries>& series);
// A "nice" upper end for an axis holding values up to `v` (1, 2, 2.5, 5 x 10^n above v).
double nice_ceiling(double v);

// A read-only table with `headers`, sized to its contents, rows alternating.
QTableWidget* new_table(const QStringList& headers);
// Appends a row of `cells` to `t`.
void add_row(QTableWidget* t, const QStringList& cells);
// `content` under a bold `title`.
QWidget* section(const QString& title, QWidget* content);

// The n-th colour of the charts' palette (distinguishable, colour-blind friendly).
QColor palette_color(int n);

}  // namespace granary::gui
