// Resource utilisation as a heat map: one row per resource of `utilization.resources[]`,
// grouped by kind (a label per group on the left), one column per interval of
// `utilization.t_s`, the colour the busy fraction (0 to 1, a colour bar on the right). Qt
// Charts has no heat map: the cells are a QImage scaled into the plot area, the rest QPainter.
//
// Thread-safety: GUI thread only.
#pragma once

#include <QImage>
#include <QString>
#include <QWidget>
#include <nlohmann/json.hpp>
#include <vector>

namespace granary::gui {

class HeatMap : public QWidget {
  Q_OBJECT
 public:
  explicit HeatMap(QWidget* parent = nullptr);

  // Shows `utilization` (the report's object); rows sorted by kind, then as the report lists
  // them.
  void set_utilization(const nlohmann::json& utilization);

  int row_count() const { return static_cast<int>(rows_.size()); }
  int column_count() const { return image_.width(); }
  // The kinds in row order, one per group, and each row's resource name.
  QStringList kinds() const;
  QString row_name(int row) const { return rows_.at(static_cast<size_t>(row)).name; }
  // The colour of a busy fraction (0 to 1): dark blue, through green and yellow, to red.
  static QColor color_of(double busy);

  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  struct Row {
    QString name, kind;
  };
  QRect plot_rect() const;
  void paint_labels(QPainter& p, const QRect& plot) const;
  void paint_time_axis(QPainter& p, const QRect& plot) const;
  void paint_color_bar(QPainter& p, const QRect& plot) const;

  std::vector<Row> rows_;
  std::vector<double> t_s_;
  QImage image_;  // columns x rows, one pixel per cell
};

}  // namespace granary::gui
