// The utilisation heat map (heat_map.h).
#include "gui/heat_map.h"

#include <QFontMetricsF>
#include <QPainter>
#include <algorithm>
#include <cmath>
#include <map>

namespace granary::gui {

using nlohmann::json;

namespace {

constexpr int kLeft = 200;   // kind and resource labels
constexpr int kRight = 90;   // the colour bar and its labels
constexpr int kTop = 28;     // the title
constexpr int kBottom = 44;  // the time axis and its title
const QColor kNoData(200, 200, 200);

int plot_height_for(int rows) {
  return std::clamp(rows * 12, 160, 560);
}

}  // namespace

HeatMap::HeatMap(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(kTop + kBottom + plot_height_for(0));
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

QColor HeatMap::color_of(double busy) {
  if (!std::isfinite(busy)) return kNoData;
  // Stops of a perceptual ramp: idle dark blue, half busy green, saturated dark red.
  static const std::pair<double, QColor> stops[] = {
      {0.0, QColor(38, 50, 120)},   {0.25, QColor(33, 120, 180)}, {0.5, QColor(60, 170, 100)},
      {0.75, QColor(245, 200, 50)}, {0.9, QColor(240, 110, 40)},  {1.0, QColor(170, 20, 30)}};
  const double b = std::clamp(busy, 0.0, 1.0);
  for (size_t i = 1; i < std::size(stops); ++i) {
    if (b <= stops[i].first) {
      const double f = (b - stops[i - 1].first) / (stops[i].first - stops[i - 1].first);
      const QColor& a = stops[i - 1].second;
      const QColor& c = stops[i].second;
      return QColor::fromRgbF(a.redF() + f * (c.redF() - a.redF()),
                              a.greenF() + f * (c.greenF() - a.greenF()),
                              a.blueF() + f * (c.blueF() - a.blueF()));
    }
  }
  return stops[std::size(stops) - 1].second;
}

void HeatMap::set_utilization(const json& utilization) {
  rows_.clear();
  t_s_.clear();
  for (const json& t : utilization.value("t_s", json::array())) {
    t_s_.push_back(t.is_number() ? t.get<double>() : 0.0);
  }
  // Group by kind, keeping the report's order inside a kind and the kinds' first appearance.
  std::vector<std::string> kind_order;
  std::map<std::string, std::vector<const json*>> by_kind;
  const json resources = utilization.value("resources", json::array());
  for (const json& r : resources) {
    const std::string kind = r.value("kind", std::string("?"));
    if (!by_kind.count(kind)) kind_order.push_back(kind);
    by_kind[kind].push_back(&r);
  }
  const int columns = static_cast<int>(t_s_.size());
  int rows = 0;
  for (const auto& [kind, list] : by_kind) rows += static_cast<int>(list.size());
  image_ = QImage(std::max(columns, 1), std::max(rows, 1), QImage::Format_RGB32);
  image_.fill(kNoData);
  int y = 0;
  for (const std::string& kind : kind_order) {
    for (const json* r : by_kind[kind]) {
      rows_.push_back({QString::fromStdString(r->value("name", "")), QString::fromStdString(kind)});
      const json series = r->value("series", json::array());
      for (int x = 0; x < columns && x < static_cast<int>(series.size()); ++x) {
        const json& v = series[static_cast<size_t>(x)];
        image_.setPixelColor(x, y, color_of(v.is_number() ? v.get<double>() : NAN));
      }
      ++y;
    }
  }
  if (columns == 0) image_ = QImage();
  setMinimumHeight(kTop + kBottom + plot_height_for(row_count()));
  updateGeometry();
  update();
}

QStringList HeatMap::kinds() const {
  QStringList out;
  for (const Row& r : rows_) {
    if (out.isEmpty() || out.back() != r.kind) out << r.kind;
  }
  return out;
}

QSize HeatMap::sizeHint() const {
  return QSize(1200, kTop + kBottom + plot_height_for(row_count()));
}

QRect HeatMap::plot_rect() const {
  return QRect(kLeft, kTop, std::max(50, width() - kLeft - kRight), plot_height_for(row_count()));
}

void HeatMap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  QFont title_font = font();
  title_font.setBold(true);
  p.setFont(title_font);
  p.drawText(QRect(0, 4, width(), kTop - 6), Qt::AlignCenter,
             tr("Resource utilisation over time (busy fraction per resource)"));
  p.setFont(font());
  const QRect plot = plot_rect();
  if (rows_.empty() || image_.isNull()) {
    p.drawText(plot, Qt::AlignCenter, tr("The report has no utilisation series."));
    return;
  }
  // Column i covers (t[i-1], t[i]]: drawn at its own width (the last interval may be shorter).
  const double t_max = std::max(t_s_.back(), 1e-9);
  // Whole pixels, each column from where the previous one ended: no gaps between them.
  int x_prev = plot.left();
  for (int x = 0; x < static_cast<int>(t_s_.size()); ++x) {
    const int x1 =
        plot.left() +
        static_cast<int>(std::lround(plot.width() * t_s_[static_cast<size_t>(x)] / t_max));
    p.drawImage(QRect(x_prev, plot.top(), std::max(x1 - x_prev, 1), plot.height()), image_,
                QRect(x, 0, 1, image_.height()));
    x_prev = std::max(x1, x_prev + 1);
  }
  p.setPen(Qt::black);
  p.drawRect(plot.adjusted(0, 0, -1, -1));
  paint_labels(p, plot);
  paint_time_axis(p, plot);
  paint_color_bar(p, plot);
}

void HeatMap::paint_labels(QPainter& p, const QRect& plot) const {
  const double row_h = static_cast<double>(plot.height()) / row_count();
  const bool names = row_h >= 11;
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.8);
  QFont bold = font();
  bold.setBold(true);
  const double label_h = QFontMetricsF(bold).height();
  double last_bottom = 0;  // labels of groups thinner than a line move down, not over each other
  int start = 0;
  for (int r = 1; r <= row_count(); ++r) {
    if (r < row_count() &&
        rows_[static_cast<size_t>(r)].kind == rows_[static_cast<size_t>(start)].kind) {
      continue;
    }
    const double y0 = plot.top() + start * row_h, y1 = plot.top() + r * row_h;
    p.setPen(QPen(Qt::white, 2));
    if (r < row_count()) p.drawLine(QPointF(plot.left(), y1), QPointF(plot.right(), y1));
    p.setPen(Qt::black);
    p.setFont(bold);
    const QString kind =
        QString("%1 (%2)").arg(rows_[static_cast<size_t>(start)].kind).arg(r - start);
    if (names) {
      for (int i = start; i < r; ++i) {
        p.setFont(small);
        p.drawText(QRectF(4, plot.top() + i * row_h, kLeft - 8, row_h),
                   Qt::AlignRight | Qt::AlignVCenter, rows_[static_cast<size_t>(i)].name);
      }
      p.setFont(bold);
      const double top = std::max(y0, last_bottom);
      p.drawText(QRectF(4, top, kLeft - 8, label_h), Qt::AlignLeft | Qt::AlignVCenter,
                 rows_[static_cast<size_t>(start)].kind);
      last_bottom = top + label_h;
    } else {
      const double top = std::max((y0 + y1 - label_h) / 2, last_bottom);
      p.drawText(QRectF(4, top, kLeft - 14, label_h), Qt::AlignRight | Qt::AlignVCenter, kind);
      last_bottom = top + label_h;
    }
    p.drawLine(QPointF(kLeft - 3, y0 + 1), QPointF(kLeft - 3, y1 - 1));
    start = r;
  }
  p.setFont(font());
}

void HeatMap::paint_time_axis(QPainter& p, const QRect& plot) const {
  const double t_max = std::max(t_s_.back(), 1e-9);
  const double raw_step = t_max / 8;
  const double mag = std::pow(10.0, std::floor(std::log10(raw_step)));
  double step = mag;
  for (double f : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (f * mag >= raw_step) {
      step = f * mag;
      break;
    }
  }
  p.setPen(Qt::black);
  for (double t = 0; t <= t_max * (1 + 1e-9); t += step) {
    const double x = plot.left() + plot.width() * t / t_max;
    p.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + 4));
    p.drawText(QRectF(x - 40, plot.bottom() + 5, 80, 16), Qt::AlignHCenter | Qt::AlignTop,
               QString::number(t, 'g', 4));
  }
  p.drawText(QRect(plot.left(), plot.bottom() + 22, plot.width(), 18), Qt::AlignCenter,
             tr("time (s)"));
}

void HeatMap::paint_color_bar(QPainter& p, const QRect& plot) const {
  const QRect bar(plot.right() + 16, plot.top(), 16, plot.height());
  for (int y = 0; y < bar.height(); ++y) {
    p.setPen(color_of(1.0 - static_cast<double>(y) / std::max(bar.height() - 1, 1)));
    p.drawLine(bar.left(), bar.top() + y, bar.right(), bar.top() + y);
  }
  p.setPen(Qt::black);
  p.drawRect(bar.adjusted(0, 0, -1, -1));
  for (double v : {0.0, 0.25, 0.5, 0.75, 0.9, 1.0}) {
    const double y = bar.bottom() - v * (bar.height() - 1);
    p.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 3, y));
    p.drawText(QRectF(bar.right() + 5, y - 8, 40, 16), Qt::AlignLeft | Qt::AlignVCenter,
               QString::number(v, 'g', 2));
  }
  p.save();
  p.translate(bar.right() + 50, plot.center().y());
  p.rotate(-90);
  p.drawText(QRect(-plot.height() / 2, -10, plot.height(), 20), Qt::AlignCenter,
             tr("busy fraction (0..1)"));
  p.restore();
}

}  // namespace granary::gui
