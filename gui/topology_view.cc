// The topology drawing (topology_view.h).
#include "gui/topology_view.h"

#include <QGraphicsLineItem>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>

namespace granary::gui {

namespace {

using models::LinkRole;
using models::NodeKind;

constexpr double kHostW = 96, kHostH = 17, kHostGap = 3;
constexpr double kRackGap = 12, kSwitchH = 24, kLevelGap = 100, kRackTop = 44;
constexpr int kHostsPerColumn = 24;

const QColor kClientColor(0xc8, 0xe6, 0xc9), kStorageColor(0xbb, 0xde, 0xfb),
    kMdsColor(0xff, 0xe0, 0xb2), kSwitchColor(0xe0, 0xe0, 0xe0), kDriveColor(0x64, 0x95, 0xc8),
    kHighlight(0xd3, 0x2f, 0x2f);

QColor color_of(NodeKind kind) {
  switch (kind) {
    case NodeKind::kClient:
      return kClientColor;
    case NodeKind::kStorage:
      return kStorageColor;
    case NodeKind::kMds:
      return kMdsColor;
    default:
      return kSwitchColor;
  }
}

QString link_label(const models::TopologyLink& l) {
  if (l.aggregated > 1) {
    return QString("%1 × %2")
        .arg(l.aggregated)
        .arg(format_link_speed(l.forward_bytes_per_s / l.aggregated));
  }
  return format_link_speed(l.forward_bytes_per_s);
}

// A text label with a white backing, centred on (x, y).
QGraphicsSimpleTextItem* add_label(QGraphicsScene* scene, const QString& text, double x, double y,
                                   double point_size, bool bold = false) {
  auto* t = new QGraphicsSimpleTextItem(text);
  QFont f = t->font();
  f.setPointSizeF(point_size);
  f.setBold(bold);
  t->setFont(f);
  const QRectF r = t->boundingRect();
  t->setPos(x - r.width() / 2, y - r.height() / 2);
  auto* back = scene->addRect(QRectF(t->pos(), r.size()).adjusted(-2, -1, 2, 1), Qt::NoPen,
                              QColor(255, 255, 255, 225));
  back->setZValue(2);
  t->setZValue(3);
  scene->addItem(t);
  return t;
}

}  // namespace

QString format_link_speed(double bytes_per_s) {
  const double gbps = bytes_per_s * 8 / 1e9;
  if (gbps >= 1000) return QString("%1 Tb/s").arg(gbps / 1000, 0, 'f', gbps >= 10000 ? 0 : 1);
  return QString("%1 Gb/s").arg(gbps, 0, 'f', gbps >= 10 || gbps == std::floor(gbps) ? 0 : 1);
}

TopologyView::TopologyView(QWidget* parent)
    : QWidget(parent), legend_(new QLabel), scene_(new QGraphicsScene(this)) {
  view_ = new QGraphicsView(scene_);
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setRenderHint(QPainter::TextAntialiasing);
  view_->setDragMode(QGraphicsView::ScrollHandDrag);
  view_->setBackgroundBrush(Qt::white);
  legend_->setWordWrap(true);
  legend_->setTextFormat(Qt::RichText);
  legend_->setContentsMargins(8, 6, 8, 6);
  legend_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(legend_);
  layout->addWidget(view_, 1);
  set_unavailable(tr("No scenario."));
}

void TopologyView::set_unavailable(const QString& reason) {
  scene_->clear();
  link_items_.clear();
  node_items_.clear();
  highlighted_.clear();
  topology_ = {};
  legend_->setText(tr("<b>No topology</b>: %1").arg(reason.toHtmlEscaped()));
}

void TopologyView::set_topology(const models::Topology& topology, const QString& summary) {
  topology_ = topology;
  highlighted_.clear();
  build_scene();
  legend_->setText(legend_for(summary));
  fit();
}

QString TopologyView::legend_for(const QString& summary) const {
  const models::MaxFlowBound bound = models::read_max_flow(topology_);
  int drives = static_cast<int>(topology_.drives.size());
  QStringList bottleneck;
  for (const std::string& b : bound.bottleneck) bottleneck << QString::fromStdString(b);
  auto key = [](const QColor& c, const QString& what) {
    return QString("<span style='background-color:%1'>&nbsp;&nbsp;&nbsp;&nbsp;</span> %2")
        .arg(c.name(), what);
  };
  return QString(
             "<b>%1</b><br>%2<br>%3 GPU nodes, %4 storage servers (%5 drives), %6 metadata "
             "servers, %7 switches<br>Max-flow bound on reads (storage to GPUs): <b>%8 GB/s</b>"
             " &mdash; cut: %9<br>%10 &nbsp; %11 &nbsp; %12 &nbsp; %13 &nbsp; %14 &nbsp; link "
             "labels: speed per link (N × speed: N cables merged)")
      .arg(summary.toHtmlEscaped(), QString::fromStdString(topology_.description).toHtmlEscaped())
      .arg(topology_.clients.size())
      .arg(topology_.storage.size())
      .arg(drives)
      .arg(topology_.mds.size())
      .arg(topology_.switches.size())
      .arg(bound.bytes_per_s / 1e9, 0, 'f', 1)
      .arg(bottleneck.join("; ").toHtmlEscaped(), key(kClientColor, tr("GPU node")),
           key(kStorageColor, tr("storage server")), key(kMdsColor, tr("metadata server")),
           key(kSwitchColor, tr("switch")), key(kHighlight, tr("bottleneck")));
}

void TopologyView::build_scene() {
  scene_->clear();
  node_items_.clear();
  link_items_.assign(topology_.links.size(), {});
  const auto& nodes = topology_.nodes;
  const int n = static_cast<int>(nodes.size());
  // The tree from the top switch: parent and the link to it, children in index order.
  std::vector<std::vector<std::pair<int, int>>> adjacent(static_cast<size_t>(n));
  for (size_t i = 0; i < topology_.links.size(); ++i) {
    const auto& l = topology_.links[i];
    adjacent[static_cast<size_t>(l.a)].push_back({l.b, static_cast<int>(i)});
    adjacent[static_cast<size_t>(l.b)].push_back({l.a, static_cast<int>(i)});
  }
  int root = topology_.switches.empty() ? 0 : topology_.switches.back();
  for (int s : topology_.switches) {
    if (nodes[static_cast<size_t>(s)].name == "spine" ||
        nodes[static_cast<size_t>(s)].name == "core")
      root = s;
  }
  std::vector<int> parent(static_cast<size_t>(n), -1), up_link(static_cast<size_t>(n), -1);
  std::vector<std::vector<int>> children(static_cast<size_t>(n));
  std::vector<int> order;
  std::vector<bool> seen(static_cast<size_t>(n), false);
  std::function<void(int)> visit = [&](int v) {
    seen[static_cast<size_t>(v)] = true;
    order.push_back(v);
    auto next = adjacent[static_cast<size_t>(v)];
    std::sort(next.begin(), next.end());
    for (auto [w, link] : next) {
      if (seen[static_cast<size_t>(w)]) continue;
      parent[static_cast<size_t>(w)] = v;
      up_link[static_cast<size_t>(w)] = link;
      children[static_cast<size_t>(v)].push_back(w);
      visit(w);
    }
  };
  if (n > 0) visit(root);
  auto kind = [&](int v) { return nodes[static_cast<size_t>(v)].kind; };
  auto is_host = [&](int v) {
    return kind(v) == NodeKind::kClient || kind(v) == NodeKind::kStorage ||
           kind(v) == NodeKind::kMds;
  };
  // Switch depth; leaves are the switches with hosts below them.
  std::vector<int> depth(static_cast<size_t>(n), 0);
  int leaf_depth = 0;
  for (int v : order) {
    if (parent[static_cast<size_t>(v)] >= 0)
      depth[static_cast<size_t>(v)] =
          depth[static_cast<size_t>(parent[static_cast<size_t>(v)])] + 1;
  }
  std::vector<int> leaves;
  for (int v : order) {
    if (kind(v) != NodeKind::kSwitch) continue;
    for (int c : children[static_cast<size_t>(v)]) {
      if (is_host(c)) {
        leaves.push_back(v);
        leaf_depth = std::max(leaf_depth, depth[static_cast<size_t>(v)]);
        break;
      }
    }
  }
  std::vector<QPointF> top(static_cast<size_t>(n)), bottom(static_cast<size_t>(n));
  std::vector<double> center_x(static_cast<size_t>(n), -1);
  std::vector<QGraphicsRectItem*> box(static_cast<size_t>(n), nullptr);
  const double leaf_y = leaf_depth * kLevelGap;
  QFont small_font;
  small_font.setPointSizeF(7.5);

  auto add_box = [&](int v, QRectF r, const QString& text) {
    auto* item = scene_->addRect(r, QPen(QColor(0x55, 0x55, 0x55), 1), color_of(kind(v)));
    item->setZValue(1);
    item->setData(0, static_cast<int>(kind(v)));
    item->setData(1, QString::fromStdString(nodes[static_cast<size_t>(v)].name));
    item->setToolTip(QString::fromStdString(nodes[static_cast<size_t>(v)].name));
    auto* label = new QGraphicsSimpleTextItem(text, item);
    label->setFont(small_font);
    const QRectF b = label->boundingRect();
    label->setPos(r.left() + 4, r.center().y() - b.height() / 2);
    box[static_cast<size_t>(v)] = item;
    top[static_cast<size_t>(v)] = QPointF(r.center().x(), r.top());
    bottom[static_cast<size_t>(v)] = QPointF(r.center().x(), r.bottom());
    center_x[static_cast<size_t>(v)] = r.center().x();
    ++node_items_[static_cast<int>(kind(v))];
  };

  // Racks: a leaf and, below it, its hosts (a client's own drive set, design local, after it).
  double x = 0;
  for (int leaf : leaves) {
    std::vector<int> hosts;
    for (int c : children[static_cast<size_t>(leaf)]) {
      if (!is_host(c)) continue;
      hosts.push_back(c);
      for (int d : children[static_cast<size_t>(c)]) {
        if (kind(d) == NodeKind::kStorage) hosts.push_back(d);
      }
    }
    const int columns =
        std::max(1, (static_cast<int>(hosts.size()) + kHostsPerColumn - 1) / kHostsPerColumn);
    const double width = columns * (kHostW + 14);
    add_box(leaf, QRectF(x, leaf_y, width - 4, kSwitchH),
            QString::fromStdString(nodes[static_cast<size_t>(leaf)].name));
    // The hosts' link speeds under the leaf.
    QStringList speeds;
    for (int h : hosts) {
      const QString s =
          format_link_speed(topology_.links[static_cast<size_t>(up_link[static_cast<size_t>(h)])]
                                .forward_bytes_per_s);
      if (!speeds.contains(s)) speeds << s;
    }
    if (!speeds.isEmpty()) {
      add_label(scene_, speeds.join(", ") + tr(" each"), x + width / 2, leaf_y + kSwitchH + 11,
                7.5);
    }
    for (size_t i = 0; i < hosts.size(); ++i) {
      const int h = hosts[i];
      const int column = static_cast<int>(i) / kHostsPerColumn;
      const int row = static_cast<int>(i) % kHostsPerColumn;
      const double bus_x = x + column * (kHostW + 14) + 6;
      const double y = leaf_y + kSwitchH + kRackTop - 20 + row * (kHostH + kHostGap);
      const auto& node = nodes[static_cast<size_t>(h)];
      QString text = QString::fromStdString(node.name);
      add_box(h, QRectF(bus_x + 8, y, kHostW, kHostH), text);
      const int link = up_link[static_cast<size_t>(h)];
      const auto& l = topology_.links[static_cast<size_t>(link)];
      // The host's link: a tick from the rack's bus (a client's local drives: from the client).
      const double width_px =
          std::clamp(1 + std::log2(std::max(1.0, l.forward_bytes_per_s * 8 / 1e9 / 25)), 1.0, 5.0);
      auto* tick = scene_->addLine(bus_x, y + kHostH / 2, bus_x + 8, y + kHostH / 2,
                                   QPen(QColor(0x44, 0x44, 0x44), width_px));
      link_items_[static_cast<size_t>(link)].lines.push_back(tick);
      if (row == 0) {
        const int last = std::min<int>(static_cast<int>(hosts.size()) - column * kHostsPerColumn,
                                       kHostsPerColumn) -
                         1;
        scene_->addLine(bus_x, leaf_y + kSwitchH, bus_x,
                        y + last * (kHostH + kHostGap) + kHostH / 2,
                        QPen(QColor(0x88, 0x88, 0x88), 1));
      }
      // Folded in: a client's memory (or GPUDirect) path, a server's drives.
      for (int c : children[static_cast<size_t>(h)]) {
        const int cl = up_link[static_cast<size_t>(c)];
        if (kind(c) == NodeKind::kClientSink) {
          link_items_[static_cast<size_t>(cl)].shapes.push_back(box[static_cast<size_t>(h)]);
        }
      }
      if (node.kind == NodeKind::kStorage) {
        int drives = 0;
        for (int c : children[static_cast<size_t>(h)])
          drives += kind(c) == NodeKind::kDrive ? 1 : 0;
        if (drives > 0) {
          auto* strip = scene_->addRect(QRectF(bus_x + 8 + kHostW - 26, y + 2, 22, kHostH - 4),
                                        QPen(Qt::NoPen), kDriveColor);
          strip->setZValue(1.5);
          strip->setToolTip(tr("%1 drives").arg(drives));
          auto* count = new QGraphicsSimpleTextItem(QString::number(drives), strip);
          QFont f = small_font;
          f.setPointSizeF(6.5);
          count->setFont(f);
          count->setBrush(Qt::white);
          const QRectF b = count->boundingRect();
          count->setPos(bus_x + 8 + kHostW - 15 - b.width() / 2, y + kHostH / 2 - b.height() / 2);
          for (int c : children[static_cast<size_t>(h)]) {
            if (kind(c) == NodeKind::kDrive)
              link_items_[static_cast<size_t>(up_link[static_cast<size_t>(c)])].shapes.push_back(
                  strip);
          }
        }
      }
    }
    x += width + kRackGap;
  }
  // Switches above the leaves, bottom-up: centred over their children.
  for (int level = leaf_depth - 1; level >= 0; --level) {
    for (int v : order) {
      if (kind(v) != NodeKind::kSwitch || depth[static_cast<size_t>(v)] != level) continue;
      double lo = 1e18, hi = -1e18;
      for (int c : children[static_cast<size_t>(v)]) {
        if (center_x[static_cast<size_t>(c)] < 0) continue;
        lo = std::min(lo, center_x[static_cast<size_t>(c)]);
        hi = std::max(hi, center_x[static_cast<size_t>(c)]);
      }
      if (lo > hi) lo = hi = 0;
      const double w = std::max(90.0, std::min(hi - lo, 240.0));
      add_box(v, QRectF((lo + hi) / 2 - w / 2, level * kLevelGap, w, kSwitchH),
              QString::fromStdString(nodes[static_cast<size_t>(v)].name));
    }
  }
  // Fabric links: from a switch's top to its parent's bottom, labelled near the lower end.
  for (int v : order) {
    const int p = parent[static_cast<size_t>(v)];
    if (p < 0 || kind(v) != NodeKind::kSwitch || !box[static_cast<size_t>(v)]) continue;
    const auto& l = topology_.links[static_cast<size_t>(up_link[static_cast<size_t>(v)])];
    const double gbps = l.forward_bytes_per_s * 8 / 1e9;
    const double width_px = std::clamp(1 + 1.2 * std::log2(std::max(1.0, gbps / 100)), 1.0, 9.0);
    auto* line =
        scene_->addLine(QLineF(top[static_cast<size_t>(v)], bottom[static_cast<size_t>(p)]),
                        QPen(QColor(0x60, 0x7d, 0x8b), width_px, Qt::SolidLine, Qt::RoundCap));
    line->setZValue(0);
    line->setToolTip(QString::fromStdString(l.name) + ": " + link_label(l));
    link_items_[static_cast<size_t>(up_link[static_cast<size_t>(v)])].lines.push_back(line);
    const QPointF at = top[static_cast<size_t>(v)] +
                       (bottom[static_cast<size_t>(p)] - top[static_cast<size_t>(v)]) * 0.2;
    add_label(scene_, link_label(l), at.x(), at.y(), 7.5);
  }
  scene_->setSceneRect(scene_->itemsBoundingRect().adjusted(-10, -10, 10, 10));
}

void TopologyView::set_bottleneck(const std::vector<std::string>& link_names,
                                  const std::vector<LinkRole>& roles) {
  highlighted_.clear();
  for (size_t i = 0; i < topology_.links.size() && i < link_items_.size(); ++i) {
    const auto& l = topology_.links[i];
    const bool on = std::find(link_names.begin(), link_names.end(), l.name) != link_names.end() ||
                    std::find(roles.begin(), roles.end(), l.role) != roles.end();
    if (on) highlighted_.push_back(l.name);
    for (QGraphicsLineItem* line : link_items_[i].lines) {
      QPen pen = line->pen();
      if (!line->data(2).isValid()) line->setData(2, QVariant::fromValue(pen));
      pen = line->data(2).value<QPen>();
      if (on) {
        pen.setColor(kHighlight);
        pen.setWidthF(pen.widthF() + 2);
      }
      line->setPen(pen);
    }
    for (QAbstractGraphicsShapeItem* shape : link_items_[i].shapes) {
      if (!shape->data(2).isValid()) shape->setData(2, QVariant::fromValue(shape->pen()));
      shape->setPen(on ? QPen(kHighlight, 3) : shape->data(2).value<QPen>());
    }
  }
}

std::vector<std::string> TopologyView::highlighted_links() const {
  return highlighted_;
}

int TopologyView::node_item_count(NodeKind kind) const {
  const auto it = node_items_.find(static_cast<int>(kind));
  return it == node_items_.end() ? 0 : it->second;
}

void TopologyView::fit() {
  if (scene_->items().isEmpty()) return;
  view_->resetTransform();
  const QRectF r = scene_->sceneRect();
  const QSize s = view_->viewport()->size();
  const double scale = std::min({1.6, (s.width() - 4) / r.width(), (s.height() - 4) / r.height()});
  view_->scale(scale, scale);
  view_->centerOn(r.center());
}

void TopologyView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fit();
}

void TopologyView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  fit();
}

}  // namespace granary::gui
