// TopologyView: the flagship's hosts and switches, link labels with units, the legend's
// max-flow bound, highlighting by link name and role.
#include "gui/topology_view.h"

#include <gtest/gtest.h>

#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>

#include "tests/gui/gui_test_util.h"

namespace granary::gui {
namespace {

using models::LinkRole;
using models::NodeKind;

models::Topology topology_of(const QString& path) {
  auto doc = testing::load(path);
  const Validation& v = doc->validate();
  EXPECT_TRUE(v.ok) << v.message;
  return v.topology.value_or(models::Topology{});
}

QStringList texts(const TopologyView& t) {
  QStringList out;
  for (QGraphicsItem* i : t.view()->scene()->items()) {
    if (auto* s = dynamic_cast<QGraphicsSimpleTextItem*>(i)) out << s->text();
  }
  return out;
}

TEST(TopologyView, TheFlagshipShowsEveryClientAndStorageServer) {
  TopologyView t;
  t.resize(1400, 900);
  t.set_topology(topology_of(testing::flagship()), "flagship");
  EXPECT_EQ(t.node_item_count(NodeKind::kClient), 128);
  EXPECT_EQ(t.node_item_count(NodeKind::kStorage), 16);
  EXPECT_EQ(t.node_item_count(NodeKind::kMds), 0);
  // 8 hosts per leaf: 16 client leaves, 2 storage leaves, and the spine.
  EXPECT_EQ(t.node_item_count(NodeKind::kSwitch), 19);
  EXPECT_EQ(t.node_item_count(NodeKind::kDrive), 0);  // folded into their servers
  const QStringList labels = texts(t);
  EXPECT_TRUE(labels.contains("200 Gb/s each"));                  // the client NICs
  EXPECT_TRUE(labels.contains("800 Gb/s each\n24 drives each"));  // 2 x 400 Gb/s per server
  int fabric = 0;
  for (const QString& l : labels) fabric += l.contains("×") && l.endsWith("Gb/s") ? 1 : 0;
  EXPECT_EQ(fabric, 18) << labels.join(" | ").toStdString();  // one per leaf uplink
  // The legend: counts and the max-flow bound in GB/s (16 servers x 800 Gb/s = 1600 GB/s of
  // line rate: the storage NICs cut).
  EXPECT_NE(t.legend_text().indexOf("128 GPU nodes, 16 storage servers (384 drives)"), -1)
      << t.legend_text().toStdString();
  EXPECT_NE(t.legend_text().indexOf("<b>1600.0 GB/s</b>"), -1) << t.legend_text().toStdString();
}

TEST(TopologyView, MetadataServersOfAParallelFileSystemAreDrawn) {
  TopologyView t;
  const models::Topology topology =
      topology_of(testing::scenario("read-storm-128-dgx-a100-pfs.json"));
  ASSERT_GT(topology.mds.size(), 0u);
  t.set_topology(topology, "pfs");
  EXPECT_EQ(t.node_item_count(NodeKind::kMds), static_cast<int>(topology.mds.size()));
}

TEST(TopologyView, TheBottleneckIsHighlightedByNameAndRole) {
  TopologyView t;
  const models::Topology topology = topology_of(testing::flagship());
  t.set_topology(topology, "flagship");
  t.set_bottleneck({"leaf3.uplink", "no-such-link"}, {LinkRole::kStorageNic});
  const std::vector<std::string> on = t.highlighted_links();
  EXPECT_EQ(on.size(), 17u);  // the uplink and 16 storage NICs
  EXPECT_NE(std::find(on.begin(), on.end(), "leaf3.uplink"), on.end());
  EXPECT_NE(std::find(on.begin(), on.end(), "storage0.nic"), on.end());
  t.set_bottleneck({}, {});
  EXPECT_TRUE(t.highlighted_links().empty());
}

TEST(TopologyView, LinkSpeedsHaveUnits) {
  EXPECT_EQ(format_link_speed(25e9), "200 Gb/s");
  EXPECT_EQ(format_link_speed(400e9), "3.2 Tb/s");
  EXPECT_EQ(format_link_speed(3.125e9), "25 Gb/s");
  EXPECT_EQ(format_link_speed(0.1875e9), "1.5 Gb/s");
}

}  // namespace
}  // namespace granary::gui
