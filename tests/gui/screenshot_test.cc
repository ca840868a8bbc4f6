// granary-gui --screenshot: PNGs of the requested size without a display; errors exit 2 with
// one line.
#include <gtest/gtest.h>

#include <QImage>
#include <QProcess>
#include <QTemporaryDir>

#include "tests/gui/gui_test_util.h"

namespace granary::gui {
namespace {

struct Exit {
  int code = -1;
  QString err;
};

Exit run_gui(const QStringList& args) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.remove("QT_QPA_PLATFORM");  // the screenshot mode chooses offscreen itself
  env.remove("DISPLAY");
  p.setProcessEnvironment(env);
  p.start(GRANARY_GUI_BINARY, args);
  if (!p.waitForFinished(120000)) return {};
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
          QString::fromUtf8(p.readAllStandardError())};
}

TEST(Screenshot, EditorAndTopologyPngsHaveTheRequestedSize) {
  QTemporaryDir dir;
  const QString editor = dir.filePath("editor.png");
  const QString topology = dir.filePath("topology.png");
  Exit a = run_gui({"--screenshot", editor, testing::flagship()});
  ASSERT_EQ(a.code, 0) << a.err.toStdString();
  Exit b = run_gui(
      {"--screenshot", topology, "--view", "topology", "--size", "1200x700", testing::flagship()});
  ASSERT_EQ(b.code, 0) << b.err.toStdString();
  EXPECT_EQ(QImage(editor).size(), QSize(1400, 900));
  EXPECT_EQ(QImage(topology).size(), QSize(1200, 700));
}

TEST(Screenshot, ErrorsExitTwoWithOneLine) {
  QTemporaryDir dir;
  const QString out = dir.filePath("x.png");
  Exit missing = run_gui({"--screenshot", out, dir.filePath("missing.json")});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err.count('\n'), 1) << missing.err.toStdString();
  EXPECT_TRUE(missing.err.contains("missing.json: no such scenario file"))
      << missing.err.toStdString();
  // An invalid scenario has no topology (the editor view still shows it, with the error).
  const QString bad = dir.filePath("bad.json");
  QFile f(bad);
  ASSERT_TRUE(f.open(QIODevice::WriteOnly));
  QFile in(testing::flagship());
  ASSERT_TRUE(in.open(QIODevice::ReadOnly));
  f.write(in.readAll().replace("\"count\": 128", "\"count\": 0"));
  f.close();
  Exit topology = run_gui({"--screenshot", out, "--view", "topology", bad});
  EXPECT_EQ(topology.code, 2);
  EXPECT_TRUE(topology.err.contains("cluster.clients.count")) << topology.err.toStdString();
  EXPECT_EQ(topology.err.count('\n'), 1);
  EXPECT_EQ(run_gui({"--screenshot", out, bad}).code, 0);
  Exit view = run_gui({"--screenshot", out, "--view", "charts", testing::flagship()});
  EXPECT_EQ(view.code, 2);
  EXPECT_TRUE(view.err.startsWith(
      "granary-gui: --view: expected editor, topology, results, sweep or planner"));
}

}  // namespace
}  // namespace granary::gui
