// The cluster's topology drawn from models::build_topology (as the cluster plan builds it):
// the top switch (spine, or the fat-tree core) above, pod or rail-group switches below it, the
// leaves, and under each leaf its rack of hosts — GPU (client) nodes, storage servers (with
// their drives folded in), metadata servers. Fabric links are drawn with a width that grows
// with their speed and labelled with it (Gb/s or Tb/s); a rack's host links with the hosts'
// NIC speed. A legend above gives the counts, the fabric's description and the max-flow bound
// on read bandwidth (read_max_flow) with its bottleneck.
//
// set_bottleneck() highlights links by name or by role (the results of a run feed it).
//
// Thread-safety: GUI thread only.
#pragma once

#include <QGraphicsView>
#include <QLabel>
#include <QWidget>
#include <map>
#include <string>
#include <vector>

#include "models/topology.h"

class QGraphicsScene;
class QAbstractGraphicsShapeItem;
class QGraphicsLineItem;
class QGraphicsRectItem;

namespace granary::gui {

class TopologyView : public QWidget {
  Q_OBJECT
 public:
  explicit TopologyView(QWidget* parent = nullptr);

  // Draws `topology`; `summary` (the scenario's one-line summary) heads the legend.
  void set_topology(const models::Topology& topology, const QString& summary);
  // Clears the drawing and says why there is none (an invalid scenario: its message).
  void set_unavailable(const QString& reason);

  // Highlights the links named (TopologyLink::name, e.g. "leaf3.uplink", "storage2.nic") and
  // every link of the roles given; clears the previous highlight. Unknown names are ignored.
  void set_bottleneck(const std::vector<std::string>& link_names,
                      const std::vector<models::LinkRole>& roles);
  // The links highlighted now (their names).
  std::vector<std::string> highlighted_links() const;

  // Graphics items drawn for nodes of `kind` (hosts and switches; drives and sinks are folded
  // into their owner and have none).
  int node_item_count(models::NodeKind kind) const;
  QGraphicsView* view() const { return view_; }
  QString legend_text() const { return legend_->text(); }

 protected:
  void resizeEvent(QResizeEvent* event) override;
  void showEvent(QShowEvent* event) override;

 private:
  struct LinkItems {
    std::vector<QAbstractGraphicsShapeItem*> shapes;  // outlined in red when highlighted
    std::vector<QGraphicsLineItem*> lines;            // drawn red and wider
  };
  struct Drawing;
  void fit();
  void build_scene();
  void build_tree(Drawing& d) const;
  QGraphicsRectItem* add_box(Drawing& d, int node, const QRectF& r, const QString& text);
  double draw_rack(Drawing& d, int leaf, double x);
  void fold_in(Drawing& d, int host, QGraphicsRectItem* box);
  void draw_fabric(Drawing& d);
  QString legend_for(const QString& summary) const;

  QLabel* legend_;
  QGraphicsScene* scene_;
  QGraphicsView* view_;
  models::Topology topology_;
  std::map<int, int> node_items_;      // NodeKind -> count
  std::vector<LinkItems> link_items_;  // by link index
  std::vector<std::string> highlighted_;
};

// "200 Gb/s", "3.2 Tb/s": a link speed in bits per second from bytes per second.
QString format_link_speed(double bytes_per_s);

}  // namespace granary::gui
