// PDF, HTML and CSV of a report document (report_render.h).
#include "gui/report/report_render.h"

#include <QBuffer>
#include <QFile>
#include <QFont>
#include <QFontMetricsF>
#include <QPageSize>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <QTextOption>
#include <algorithm>
#include <cmath>
#include <fstream>

namespace granary::report {
namespace {

const QColor kSeriesColors[] = {QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44),
                                QColor(214, 39, 40), QColor(148, 103, 189)};

QString q(const std::string& s) {
  return QString::fromStdString(s);
}

QFont font(double points, bool bold = false) {
  QFont f("DejaVu Sans");
  f.setPointSizeF(points);
  f.setBold(bold);
  return f;
}

// Ticks for [lo, hi]: about five at 1, 2 or 5 times a power of ten.
std::vector<double> ticks(double lo, double hi) {
  const double span = hi > lo ? hi - lo : 1;
  const double raw = span / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  }
  std::vector<double> out;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push_back(t);
  return out;
}

QString tick_text(double v) {
  if (std::fabs(v) < 1e-12) return "0";
  return QString::number(v, 'g', 4);
}

}  // namespace

void draw_chart(QPainter& p, const QRectF& area, const Chart& c) {
  p.save();
  p.setRenderHint(QPainter::Antialiasing);
  const QFontMetricsF fm(font(8), p.device());
  const double lh = fm.height();
  p.setFont(font(9, true));
  p.setPen(Qt::black);
  p.drawText(QRectF(area.left(), area.top(), area.width(), lh * 1.4), Qt::AlignLeft, q(c.title));
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const Series& s : c.series) {
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      xmin = std::min(xmin, s.x[i]);
      xmax = std::max(xmax, s.x[i]);
      ymin = std::min(ymin, s.y[i]);
      ymax = std::max(ymax, s.y[i]);
    }
  }
  if (c.y_reference) {
    ymin = std::min(ymin, *c.y_reference);
    ymax = std::max(ymax, *c.y_reference);
  }
  if (!std::isfinite(xmin)) {
    xmin = 0;
    xmax = 1;
    ymin = 0;
    ymax = 1;
  }
  if (ymin > 0 && ymin < 0.5 * ymax) ymin = 0;  // start at zero when it is close
  const double xpad = xmax > xmin ? (xmax - xmin) * 0.05 : 1;
  const double ypad = ymax > ymin ? (ymax - ymin) * 0.08 : 1;
  xmin -= xpad;
  xmax += xpad;
  ymin -= ymin == 0 ? 0 : ypad;
  ymax += ypad;
  const QRectF plot(area.left() + fm.horizontalAdvance("00000000") + lh, area.top() + lh * 1.6,
                    area.width() * 0.72 - fm.horizontalAdvance("00000000"),
                    area.height() - lh * 4.2);
  auto X = [&](double x) { return plot.left() + (x - xmin) / (xmax - xmin) * plot.width(); };
  auto Y = [&](double y) { return plot.bottom() - (y - ymin) / (ymax - ymin) * plot.height(); };
  p.setFont(font(8));
  p.setPen(QPen(QColor(220, 220, 220), 0));
  for (double t : ticks(ymin, ymax)) {
    p.setPen(QPen(QColor(225, 225, 225), 0));
    p.drawLine(QPointF(plot.left(), Y(t)), QPointF(plot.right(), Y(t)));
    p.setPen(Qt::black);
    p.drawText(QRectF(area.left(), Y(t) - lh / 2, plot.left() - area.left() - lh * 0.3, lh),
               Qt::AlignRight | Qt::AlignVCenter, tick_text(t));
  }
  for (double t : ticks(xmin, xmax)) {
    p.setPen(Qt::black);
    p.drawText(QRectF(X(t) - lh * 3, plot.bottom() + lh * 0.2, lh * 6, lh), Qt::AlignHCenter,
               tick_text(t));
  }
  p.setPen(QPen(Qt::black, 0));
  p.drawRect(plot);
  p.drawText(QRectF(plot.left(), plot.bottom() + lh * 1.3, plot.width(), lh), Qt::AlignHCenter,
             q(c.x_label));
  p.save();
  p.translate(area.left() + lh * 0.1, plot.center().y());
  p.rotate(-90);
  p.drawText(QRectF(-plot.height() / 2, 0, plot.height(), lh), Qt::AlignHCenter, q(c.y_label));
  p.restore();
  if (c.y_reference && *c.y_reference >= ymin && *c.y_reference <= ymax) {
    p.setPen(QPen(QColor(120, 120, 120), 0, Qt::DashLine));
    p.drawLine(QPointF(plot.left(), Y(*c.y_reference)), QPointF(plot.right(), Y(*c.y_reference)));
  }
  p.setClipRect(plot);
  for (size_t k = 0; k < c.series.size(); ++k) {
    const Series& s = c.series[k];
    const QColor color = kSeriesColors[k % std::size(kSeriesColors)];
    const double r = lh * 0.22;
    if (s.points) {
      p.setPen(QPen(color.darker(120), 0));
      p.setBrush(color);
      for (size_t i = 0; i < s.x.size(); ++i) p.drawEllipse(QPointF(X(s.x[i]), Y(s.y[i])), r, r);
      p.setBrush(Qt::NoBrush);
    } else {
      p.setPen(QPen(color, lh * 0.12));
      for (size_t i = 1; i < s.x.size(); ++i) {
        p.drawLine(QPointF(X(s.x[i - 1]), Y(s.y[i - 1])), QPointF(X(s.x[i]), Y(s.y[i])));
      }
    }
  }
  p.setClipping(false);
  double ly = plot.top();
  const double lx = plot.right() + lh;
  for (size_t k = 0; k < c.series.size(); ++k) {
    const QColor color = kSeriesColors[k % std::size(kSeriesColors)];
    p.setPen(QPen(color, lh * 0.15));
    p.setBrush(color);
    if (c.series[k].points) {
      p.drawEllipse(QPointF(lx + lh * 0.4, ly + lh / 2), lh * 0.22, lh * 0.22);
    } else {
      p.drawLine(QPointF(lx, ly + lh / 2), QPointF(lx + lh * 0.8, ly + lh / 2));
    }
    p.setBrush(Qt::NoBrush);
    p.setPen(Qt::black);
    p.drawText(QRectF(lx + lh * 1.1, ly, area.right() - lx - lh, lh * 2),
               Qt::AlignLeft | Qt::TextWordWrap, q(c.series[k].name));
    ly += lh * 1.3;
  }
  if (c.y_reference) {
    p.setPen(QPen(QColor(120, 120, 120), 0, Qt::DashLine));
    p.drawLine(QPointF(lx, ly + lh / 2), QPointF(lx + lh * 0.8, ly + lh / 2));
    p.setPen(Qt::black);
    p.drawText(QRectF(lx + lh * 1.1, ly, area.right() - lx - lh, lh * 3),
               Qt::AlignLeft | Qt::TextWordWrap,
               q(c.reference_label) + " (" + tick_text(*c.y_reference) + ")");
  }
  p.restore();
}

namespace {

// Lays a document out on pages of a QPdfWriter.
class PdfLayout {
 public:
  PdfLayout(QPdfWriter& w, QPainter& p, const Document& d) : w_(w), p_(p), d_(d) {
    const QRect page = w.pageLayout().paintRectPixels(w.resolution());
    area_ = QRectF(page.left(), page.top(), page.width(), page.height());
    footer_h_ = QFontMetricsF(font(7), &w).height() * 3.2;
    y_ = area_.top();
  }

  void run() {
    text(q(d_.title), font(18, true), 0.6);
    if (!d_.subtitle.empty()) text(q(d_.subtitle), font(10), 1.0);
    for (const Block& b : d_.blocks) {
      switch (b.kind) {
        case Block::Kind::kHeading:
          need(line(font(13, true)) * 4);
          y_ += line(font(10)) * 0.4;
          text(q(b.text), font(13, true), 0.4);
          break;
        case Block::Kind::kParagraph:
          text(q(b.text), font(9.5), 0.7);
          break;
        case Block::Kind::kTable:
          table(b.table);
          break;
        case Block::Kind::kChart: {
          const double h = area_.width() * 0.42;
          need(h);
          draw_chart(p_, QRectF(area_.left(), y_, area_.width(), h), b.chart);
          y_ += h + line(font(9)) * 0.8;
          break;
        }
      }
    }
    footer();
  }

 private:
  double line(const QFont& f) const { return QFontMetricsF(f, &w_).height(); }
  double bottom() const { return area_.bottom() - footer_h_; }

  void footer() {
    p_.setFont(font(7));
    p_.setPen(QColor(90, 90, 90));
    p_.drawText(
        QRectF(area_.left(), area_.bottom() - footer_h_ * 0.8, area_.width(), footer_h_ * 0.8),
        Qt::AlignLeft | Qt::TextWordWrap, q(d_.footer) + QString("  -  page %1").arg(page_));
    p_.setPen(Qt::black);
  }
  void new_page() {
    footer();
    w_.newPage();
    ++page_;
    y_ = area_.top();
  }
  void need(double h) {
    if (y_ + h > bottom() && y_ > area_.top()) new_page();
  }
  void text(const QString& s, const QFont& f, double gap_lines) {
    p_.setFont(f);
    const QRectF r = p_.boundingRect(QRectF(area_.left(), 0, area_.width(), 1e6),
                                     Qt::AlignLeft | Qt::TextWordWrap, s);
    need(r.height());
    p_.drawText(QRectF(area_.left(), y_, area_.width(), r.height()),
                Qt::AlignLeft | Qt::TextWordWrap, s);
    y_ += r.height() + line(f) * gap_lines;
  }

  // A cell's text: wrapped at word boundaries, or inside a word too long for its column.
  static QTextOption cell_option(bool right) {
    QTextOption o(right ? Qt::AlignRight : Qt::AlignLeft);
    o.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    return o;
  }

  // Column widths: numeric columns get what their longest cell needs (numbers never wrap); the
  // text columns share the rest in proportion to what their longest cells need, each at most
  // 45% of the page (longer text wraps).
  std::vector<double> widths(const Table& t) {
    const size_t n = t.headers.size();
    const double pad = line(font(8)) * 0.9;  // the cell's padding and a margin for rounding
    std::vector<double> nat(n, 0);
    auto measure = [&](size_t c, const std::string& cell, const QFont& f, bool by_word) {
      const QFontMetricsF fm(f, &w_);
      if (!by_word) {
        nat[c] =
            std::max(nat[c], std::min(fm.horizontalAdvance(q(cell)), area_.width() * 0.45) + pad);
        return;
      }
      for (const QString& word : q(cell).split(' ')) {  // a header may wrap between words
        nat[c] = std::max(nat[c], fm.horizontalAdvance(word) + pad);
      }
    };
    for (size_t c = 0; c < n; ++c) {
      measure(c, t.headers[c], font(8, true), true);
      for (const auto& row : t.rows) {
        if (c < row.size()) measure(c, row[c], font(8), false);
      }
    }
    double fixed_sum = 0, text_sum = 0;
    for (size_t c = 0; c < n; ++c) {
      (c < t.numeric.size() && t.numeric[c] ? fixed_sum : text_sum) += nat[c];
    }
    std::vector<double> out(n);
    const double rest = std::max(area_.width() - fixed_sum, area_.width() * 0.2);
    const double scale_fixed =
        fixed_sum > area_.width() * 0.8 ? area_.width() * 0.8 / fixed_sum : 1;
    for (size_t c = 0; c < n; ++c) {
      const bool numeric = c < t.numeric.size() && t.numeric[c];
      out[c] = numeric ? nat[c] * scale_fixed : (text_sum > 0 ? nat[c] / text_sum * rest : 0);
    }
    // A table narrower than the page keeps its natural widths, stretched to the page.
    double sum = 0;
    for (double w : out) sum += w;
    for (double& w : out) w *= area_.width() / sum;
    return out;
  }
  double row_height(const std::vector<std::string>& cells, const std::vector<double>& w,
                    const QFont& f) {
    p_.setFont(f);
    double h = line(f);
    const double pad = line(f) * 0.3;
    for (size_t c = 0; c < cells.size() && c < w.size(); ++c) {
      h = std::max(
          h, p_.boundingRect(QRectF(0, 0, w[c] - 2 * pad, 1e6), q(cells[c]), cell_option(false))
                 .height());
    }
    return h + pad;
  }
  void row(const std::vector<std::string>& cells, const std::vector<double>& w,
           const std::vector<bool>& numeric, const QFont& f, bool shade) {
    const double h = row_height(cells, w, f);
    const double pad = line(f) * 0.3;
    if (shade) p_.fillRect(QRectF(area_.left(), y_, area_.width(), h), QColor(236, 240, 245));
    double x = area_.left();
    p_.setFont(f);
    for (size_t c = 0; c < cells.size() && c < w.size(); ++c) {
      const bool right = c < numeric.size() && numeric[c];
      p_.drawText(QRectF(x + pad, y_ + pad / 2, w[c] - 2 * pad, h), q(cells[c]),
                  cell_option(right));
      x += w[c];
    }
    y_ += h;
  }
  void table(const Table& t) {
    const std::vector<double> w = widths(t);
    const QFont head = font(8, true), body = font(8);
    const double first = line(font(10, true)) * 1.3 + row_height(t.headers, w, head) +
                         (t.rows.empty() ? 0 : row_height(t.rows[0], w, body));
    need(first);
    text(q(t.title), font(10, true), 0.2);
    row(t.headers, w, t.numeric, head, true);
    for (size_t i = 0; i < t.rows.size(); ++i) {
      if (y_ + row_height(t.rows[i], w, body) > bottom()) {
        new_page();
        text(q(t.title) + " (continued)", font(10, true), 0.2);
        row(t.headers, w, t.numeric, head, true);
      }
      row(t.rows[i], w, t.numeric, body, i % 2 == 1);
    }
    if (!t.note.empty()) text(q(t.note), font(7.5), 0.2);
    y_ += line(body) * 0.8;
  }

  QPdfWriter& w_;
  QPainter& p_;
  const Document& d_;
  QRectF area_;
  double footer_h_ = 0;
  double y_ = 0;
  int page_ = 1;
};

std::string html_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string chart_svg(const Chart& c) {
  QBuffer buffer;
  buffer.open(QIODevice::WriteOnly);
  QSvgGenerator svg;
  svg.setOutputDevice(&buffer);
  svg.setSize(QSize(760, 330));
  svg.setViewBox(QRect(0, 0, 760, 330));
  svg.setTitle(q(c.title));
  {
    QPainter p(&svg);
    draw_chart(p, QRectF(4, 4, 752, 322), c);
  }
  std::string text = buffer.data().toStdString();
  const size_t start = text.find("<svg");  // drop the XML prologue: inline in HTML
  return start == std::string::npos ? text : text.substr(start);
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

Status write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return Status::io_error(path + ": cannot write the file");
  return Status::ok_status();
}

}  // namespace

Status write_pdf(const Document& d, const std::string& path) {
  QPdfWriter w(q(path));
  if (!w.setPageSize(QPageSize(QPageSize::A4))) return Status::io_error(path + ": no A4 page");
  w.setPageMargins(QMarginsF(16, 14, 16, 12), QPageLayout::Millimeter);
  w.setResolution(300);
  w.setTitle(q(d.title));
  w.setCreator("Granary");
  QPainter p;
  if (!p.begin(&w)) return Status::io_error(path + ": cannot write the PDF");
  PdfLayout(w, p, d).run();
  p.end();
  if (!QFile::exists(q(path))) return Status::io_error(path + ": the PDF was not written");
  return Status::ok_status();
}

Status write_html(const Document& d, const std::string& path) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
      html_escape(d.title) +
      "</title>\n<style>\nbody{font-family:'DejaVu Sans',sans-serif;max-width:60em;margin:2em "
      "auto;color:#111;font-size:14px}\nh1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.6em;"
      "border-bottom:1px solid #ccc}\ntable{border-collapse:collapse;margin:.4em "
      "0;width:100%}\nth,td{border:1px solid #ccc;padding:.2em .5em;vertical-align:top}\nth{"
      "background:#ecf0f5;text-align:left}\ntd.n{text-align:right}\ncaption{text-align:left;"
      "font-weight:bold;padding:.3em 0}\np.note{font-size:.85em;color:#444}\nfooter{font-size:"
      ".8em;color:#555;margin-top:2em;border-top:1px solid #ccc}\n</style>\n</head>\n<body>\n";
  h += "<h1>" + html_escape(d.title) + "</h1>\n";
  if (!d.subtitle.empty()) h += "<p>" + html_escape(d.subtitle) + "</p>\n";
  for (const Block& b : d.blocks) {
    switch (b.kind) {
      case Block::Kind::kHeading:
        h += "<h2>" + html_escape(b.text) + "</h2>\n";
        break;
      case Block::Kind::kParagraph:
        h += "<p>" + html_escape(b.text) + "</p>\n";
        break;
      case Block::Kind::kTable: {
        const Table& t = b.table;
        h += "<table>\n<caption>" + html_escape(t.title) + "</caption>\n<tr>";
        for (const auto& c : t.headers) h += "<th>" + html_escape(c) + "</th>";
        h += "</tr>\n";
        for (const auto& row : t.rows) {
          h += "<tr>";
          for (size_t c = 0; c < row.size(); ++c) {
            const bool n = c < t.numeric.size() && t.numeric[c];
            h += std::string(n ? "<td class=\"n\">" : "<td>") + html_escape(row[c]) + "</td>";
          }
          h += "</tr>\n";
        }
        h += "</table>\n";
        if (!t.note.empty()) h += "<p class=\"note\">" + html_escape(t.note) + "</p>\n";
        break;
      }
      case Block::Kind::kChart:
        h += "<figure>" + chart_svg(b.chart) + "</figure>\n";
        break;
    }
  }
  h += "<footer>" + html_escape(d.footer) + "</footer>\n</body>\n</html>\n";
  return write_text(path, h);
}

Result<std::vector<std::string>> write_csv(const Document& d, const std::string& path) {
  std::vector<std::string> files;
  const std::string stem = path.size() > 4 && path.compare(path.size() - 4, 4, ".csv") == 0
                               ? path.substr(0, path.size() - 4)
                               : path;
  for (size_t i = 0; i < d.csv.size(); ++i) {
    const Table& t = d.csv[i].second;
    std::string text;
    for (size_t c = 0; c < t.headers.size(); ++c) text += (c ? "," : "") + csv_cell(t.headers[c]);
    text += "\r\n";
    for (const auto& row : t.rows) {
      for (size_t c = 0; c < row.size(); ++c) text += (c ? "," : "") + csv_cell(row[c]);
      text += "\r\n";
    }
    const std::string file = i == 0 ? path : stem + "-" + d.csv[i].first + ".csv";
    if (Status s = write_text(file, text); !s.ok()) return s;
    files.push_back(file);
  }
  return files;
}

}  // namespace granary::report
