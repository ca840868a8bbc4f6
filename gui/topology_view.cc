// The topology drawing (topology_view.h).
#include "gui/topology_view.h"

#include <QGraphicsLineItem>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace granary::gui {

namespace {

using models::LinkRole;
using models::NodeKind;

// Geometry (scene units: pixels at scale 1) and the labels' size in points.
constexpr double kHostW = 60, kHostH = 18, kHostGap = 4, kBusW = 12;
constexpr double kRackGap = 8, kSwitchH = 24, kLevelGap = 150, kRackHeader = 34;
constexpr double kSmallPt = 7;
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

// The topology as a tree from the top switch, and the items drawn so far.
struct TopologyView::Drawing {
  const models::Topology& t;
  QGraphicsScene* scene;
  std::vector<int> parent, up_link, depth;
  std::vector<std::vector<int>> children;
  std::vector<int> order;   // depth first from the top switch, children in index order
  std::vector<int> leaves;  // switches with hosts below them, in order
  int leaf_depth = 0;
  std::vector<QPointF> top, bottom;
  std::vector<double> center_x;
  std::vector<QGraphicsRectItem*> box;

  Drawing(const models::Topology& topology, QGraphicsScene* s) : t(topology), scene(s) {
    const size_t n = t.nodes.size();
    parent.assign(n, -1);
    up_link.assign(n, -1);
    depth.assign(n, 0);
    children.assign(n, {});
    top.assign(n, {});
    bottom.assign(n, {});
    center_x.assign(n, -1);
    box.assign(n, nullptr);
  }
  NodeKind kind(int v) const { return t.nodes[static_cast<size_t>(v)].kind; }
  QString name(int v) const { return QString::fromStdString(t.nodes[static_cast<size_t>(v)].name); }
  bool is_host(int v) const {
    return kind(v) == NodeKind::kClient || kind(v) == NodeKind::kStorage ||
           kind(v) == NodeKind::kMds;
  }
  const models::TopologyLink& link_up(int v) const {
    return t.links[static_cast<size_t>(up_link[static_cast<size_t>(v)])];
  }
};

void TopologyView::build_tree(Drawing& d) const {
  const size_t n = d.t.nodes.size();
  if (n == 0) return;
  std::vector<std::vector<std::pair<int, int>>> adjacent(n);
  for (size_t i = 0; i < d.t.links.size(); ++i) {
    const auto& l = d.t.links[i];
    adjacent[static_cast<size_t>(l.a)].push_back({l.b, static_cast<int>(i)});
    adjacent[static_cast<size_t>(l.b)].push_back({l.a, static_cast<int>(i)});
  }
  int root = d.t.switches.empty() ? 0 : d.t.switches.back();
  for (int s : d.t.switches) {
    if (d.name(s) == "spine" || d.name(s) == "core") root = s;
  }
  std::vector<bool> seen(n, false);
  std::vector<int> stack = {root};
  seen[static_cast<size_t>(root)] = true;
  while (!stack.empty()) {  // depth first, children in index order
    const int v = stack.back();
    stack.pop_back();
    d.order.push_back(v);
    auto next = adjacent[static_cast<size_t>(v)];
    std::sort(next.rbegin(), next.rend());
    for (auto [w, link] : next) {
      if (seen[static_cast<size_t>(w)]) continue;
      seen[static_cast<size_t>(w)] = true;
      d.parent[static_cast<size_t>(w)] = v;
      d.up_link[static_cast<size_t>(w)] = link;
      d.depth[static_cast<size_t>(w)] = d.depth[static_cast<size_t>(v)] + 1;
      stack.push_back(w);
    }
  }
  for (int v : d.order) {
    if (d.parent[static_cast<size_t>(v)] >= 0) {
      d.children[static_cast<size_t>(d.parent[static_cast<size_t>(v)])].push_back(v);
    }
  }
  for (int v : d.order) {
    if (d.kind(v) != NodeKind::kSwitch) continue;
    const auto& c = d.children[static_cast<size_t>(v)];
    if (std::any_of(c.begin(), c.end(), [&](int w) { return d.is_host(w); })) {
      d.leaves.push_back(v);
      d.leaf_depth = std::max(d.leaf_depth, d.depth[static_cast<size_t>(v)]);
    }
  }
}

QGraphicsRectItem* TopologyView::add_box(Drawing& d, int v, const QRectF& r, const QString& text) {
  auto* item = scene_->addRect(r, QPen(QColor(0x55, 0x55, 0x55), 1), color_of(d.kind(v)));
  item->setZValue(1);
  item->setData(0, static_cast<int>(d.kind(v)));
  item->setData(1, d.name(v));
  item->setToolTip(d.name(v));
  auto* label = new QGraphicsSimpleTextItem(text, item);
  QFont f = label->font();
  f.setPointSizeF(kSmallPt);
  label->setFont(f);
  const QRectF b = label->boundingRect();
  label->setPos(r.left() + 3, r.center().y() - b.height() / 2);
  d.box[static_cast<size_t>(v)] = item;
  d.top[static_cast<size_t>(v)] = QPointF(r.center().x(), r.top());
  d.bottom[static_cast<size_t>(v)] = QPointF(r.center().x(), r.bottom());
  d.center_x[static_cast<size_t>(v)] = r.center().x();
  ++node_items_[static_cast<int>(d.kind(v))];
  return item;
}

// A leaf at `x` and its rack of hosts below it (a client's own drive set, design local, right
// after the client); returns the rack's width.
double TopologyView::draw_rack(Drawing& d, int leaf, double x) {
  std::vector<int> hosts;
  for (int c : d.children[static_cast<size_t>(leaf)]) {
    if (!d.is_host(c)) continue;
    hosts.push_back(c);
    for (int w : d.children[static_cast<size_t>(c)]) {
      if (d.kind(w) == NodeKind::kStorage) hosts.push_back(w);
    }
  }
  const int n = static_cast<int>(hosts.size());
  const int columns = std::max(1, (n + kHostsPerColumn - 1) / kHostsPerColumn);
  const double column_w = kHostW + kBusW;
  const double width = columns * column_w;
  const double leaf_y = d.leaf_depth * kLevelGap;
  add_box(d, leaf, QRectF(x, leaf_y, width, kSwitchH), d.name(leaf));
  // The rack's header: each host's link speed (and a server's drives).
  QStringList speeds, drives;
  for (int h : hosts) {
    const QString s = format_link_speed(d.link_up(h).forward_bytes_per_s);
    if (!speeds.contains(s)) speeds << s;
    int count = 0;
    for (int c : d.children[static_cast<size_t>(h)]) count += d.kind(c) == NodeKind::kDrive;
    if (count > 0 && !drives.contains(QString::number(count))) drives << QString::number(count);
  }
  QString header = speeds.join(", ") + tr(" each");
  if (!drives.isEmpty()) header += "\n" + tr("%1 drives each").arg(drives.join(", "));
  add_label(scene_, header, x + width / 2, leaf_y + kSwitchH + kRackHeader / 2, kSmallPt);
  const double rack_y = leaf_y + kSwitchH + kRackHeader;
  for (int i = 0; i < n; ++i) {
    const int h = hosts[static_cast<size_t>(i)];
    const int column = i / kHostsPerColumn, row = i % kHostsPerColumn;
    const double bus_x = x + column * column_w + 3;
    const double y = rack_y + row * (kHostH + kHostGap);
    QGraphicsRectItem* host =
        add_box(d, h, QRectF(bus_x + kBusW - 3, y, kHostW, kHostH), d.name(h));
    // The host's link: a tick from the rack's bus, wider the faster.
    const int link = d.up_link[static_cast<size_t>(h)];
    const double gbps = d.link_up(h).forward_bytes_per_s * 8 / 1e9;
    const double pen_w = std::clamp(1 + std::log2(std::max(1.0, gbps / 25)), 1.0, 5.0);
    link_items_[static_cast<size_t>(link)].lines.push_back(
        scene_->addLine(bus_x, y + kHostH / 2, bus_x + kBusW - 3, y + kHostH / 2,
                        QPen(QColor(0x44, 0x44, 0x44), pen_w)));
    if (row == 0) {
      const int last = std::min(n - column * kHostsPerColumn, kHostsPerColumn) - 1;
      scene_->addLine(bus_x, leaf_y + kSwitchH, bus_x, y + last * (kHostH + kHostGap) + kHostH / 2,
                      QPen(QColor(0x88, 0x88, 0x88), 1));
    }
    fold_in(d, h, host);
  }
  return width;
}

// What a host's box stands for too: a client's memory (or GPUDirect) path, a server's drives
// (a strip at the box's right end).
void TopologyView::fold_in(Drawing& d, int h, QGraphicsRectItem* host) {
  QGraphicsRectItem* strip = nullptr;
  int drives = 0;
  for (int c : d.children[static_cast<size_t>(h)]) drives += d.kind(c) == NodeKind::kDrive;
  if (drives > 0) {
    const QRectF r = host->rect();
    strip = scene_->addRect(QRectF(r.right() - 7, r.top() + 2, 5, r.height() - 4), Qt::NoPen,
                            kDriveColor);
    strip->setZValue(1.5);
    strip->setToolTip(tr("%1: %2 drives").arg(d.name(h)).arg(drives));
  }
  for (int c : d.children[static_cast<size_t>(h)]) {
    auto& items = link_items_[static_cast<size_t>(d.up_link[static_cast<size_t>(c)])];
    if (d.kind(c) == NodeKind::kClientSink) items.shapes.push_back(host);
    if (d.kind(c) == NodeKind::kDrive && strip) items.shapes.push_back(strip);
  }
}

// Switches above the leaves, bottom-up, centred over their children; the fabric links from each
// switch's top to its parent's bottom, labelled just above the lower switch.
void TopologyView::draw_fabric(Drawing& d) {
  for (int level = d.leaf_depth - 1; level >= 0; --level) {
    for (int v : d.order) {
      if (d.kind(v) != NodeKind::kSwitch || d.depth[static_cast<size_t>(v)] != level) continue;
      double lo = 1e18, hi = -1e18;
      for (int c : d.children[static_cast<size_t>(v)]) {
        if (d.center_x[static_cast<size_t>(c)] < 0) continue;
        lo = std::min(lo, d.center_x[static_cast<size_t>(c)]);
        hi = std::max(hi, d.center_x[static_cast<size_t>(c)]);
      }
      if (lo > hi) lo = hi = 0;
      const double w = std::clamp(hi - lo, 90.0, 240.0);
      add_box(d, v, QRectF((lo + hi) / 2 - w / 2, level * kLevelGap, w, kSwitchH), d.name(v));
    }
  }
  int labelled = 0;
  for (int v : d.order) {
    const int p = d.parent[static_cast<size_t>(v)];
    if (p < 0 || d.kind(v) != NodeKind::kSwitch || !d.box[static_cast<size_t>(v)]) continue;
    const auto& l = d.link_up(v);
    const double gbps = l.forward_bytes_per_s * 8 / 1e9;
    const double pen_w = std::clamp(1 + 1.2 * std::log2(std::max(1.0, gbps / 100)), 1.0, 9.0);
    const QPointF from = d.top[static_cast<size_t>(v)], to = d.bottom[static_cast<size_t>(p)];
    auto* line = scene_->addLine(
        QLineF(from, to), QPen(QColor(0x60, 0x7d, 0x8b), pen_w, Qt::SolidLine, Qt::RoundCap));
    line->setToolTip(QString::fromStdString(l.name) + ": " + link_label(l));
    link_items_[static_cast<size_t>(d.up_link[static_cast<size_t>(v)])].lines.push_back(line);
    // Neighbours' labels alternate in height, so that wide ones do not touch.
    const double above = labelled++ % 2 == 0 ? 14.0 : 30.0;
    const QPointF at = from + (to - from) * (above / std::max(1.0, std::abs(to.y() - from.y())));
    add_label(scene_, link_label(l), at.x(), at.y(), kSmallPt);
  }
}

void TopologyView::build_scene() {
  scene_->clear();
  node_items_.clear();
  link_items_.assign(topology_.links.size(), {});
  Drawing d(topology_, scene_);
  build_tree(d);
  double x = 0;
  for (int leaf : d.leaves) x += draw_rack(d, leaf, x) + kRackGap;
  draw_fabric(d);
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
