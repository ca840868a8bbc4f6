// MainWindow: title and modified marker, recent files in QSettings (a temporary path: see
// gui_test_main.cc), the save prompt on close, undo through the Edit menu's action.
#include "gui/main_window.h"

#include <gtest/gtest.h>

#include <QAction>
#include <QMenuBar>
#include <QSettings>
#include <QTemporaryDir>

#include "gui/topology_view.h"
#include "tests/gui/gui_test_util.h"

namespace granary::gui {
namespace {

struct Prompts {
  int asked = 0;
  QMessageBox::StandardButton answer = QMessageBox::Cancel;
  QStringList errors;
};

MainWindowOptions options(Prompts& p) {
  MainWindowOptions o;
  o.ask_to_save = [&p](QWidget*, const QString&) {
    ++p.asked;
    return p.answer;
  };
  o.ask_file_name = [](QWidget*, bool) { return QString(); };
  o.show_error = [&p](QWidget*, const QString& m) { p.errors << m; };
  return o;
}

QAction* action(const QMainWindow& w, const QString& menu, const QString& text) {
  for (QAction* m : w.menuBar()->actions()) {
    if (m->text().remove('&') != menu) continue;
    for (QAction* a : m->menu()->actions()) {
      if (a->text().remove('&').startsWith(text)) return a;
    }
  }
  return nullptr;
}

TEST(MainWindow, TheTitleShowsTheFileAndAModifiedMarker) {
  Prompts p;
  MainWindow w(options(p));
  EXPECT_TRUE(w.windowTitle().startsWith("untitled.json[*]"));
  ASSERT_TRUE(w.open_file(testing::flagship()));
  EXPECT_EQ(w.windowTitle(), "read-storm-128-dgx-a100.json[*] — Granary");
  EXPECT_FALSE(w.isWindowModified());
  w.document()->set_value(JsonPointer("/seed"), 2);
  EXPECT_TRUE(w.isWindowModified());
  QAction* undo = action(w, "Edit", "Undo");
  ASSERT_NE(undo, nullptr);
  EXPECT_EQ(undo->shortcut(), QKeySequence(QKeySequence::Undo));
  undo->trigger();
  EXPECT_EQ(w.document()->json()["seed"], 1);
  EXPECT_FALSE(w.isWindowModified());
}

TEST(MainWindow, StandardShortcuts) {
  Prompts p;
  MainWindow w(options(p));
  EXPECT_EQ(action(w, "File", "Open")->shortcut(), QKeySequence(QKeySequence::Open));
  EXPECT_EQ(action(w, "File", "Save")->shortcut(), QKeySequence(QKeySequence::Save));
  EXPECT_EQ(action(w, "File", "New")->shortcut(), QKeySequence(QKeySequence::New));
  EXPECT_EQ(action(w, "Run", "Run")->shortcut(), QKeySequence(Qt::Key_F5));
  EXPECT_EQ(action(w, "Run", "Cancel")->shortcut(), QKeySequence(Qt::Key_Escape));
  EXPECT_FALSE(action(w, "Run", "Cancel")->isEnabled());  // nothing runs
}

TEST(MainWindow, RecentFilesAreRememberedInTheSettings) {
  QSettings(QSettings::IniFormat, QSettings::UserScope, "Granary", "granary-gui").clear();
  Prompts p;
  {
    MainWindow w(options(p));
    ASSERT_TRUE(w.open_file(testing::flagship()));
    ASSERT_TRUE(w.open_file(testing::scenario("ci/checkpoint-llama3-70b.json")));
    EXPECT_EQ(w.recent_files().size(), 2);
  }
  MainWindow again(options(p));
  const QStringList recent = again.recent_files();
  ASSERT_EQ(recent.size(), 2);
  EXPECT_TRUE(recent[0].endsWith("ci/checkpoint-llama3-70b.json"));
  EXPECT_TRUE(recent[1].endsWith("read-storm-128-dgx-a100.json"));
  // Stored under the temporary path, never the user's configuration.
  const QSettings s(QSettings::IniFormat, QSettings::UserScope, "Granary", "granary-gui");
  EXPECT_FALSE(s.fileName().startsWith(QDir::homePath() + "/.config"))
      << s.fileName().toStdString();
}

TEST(MainWindow, ClosingAModifiedDocumentAsksToSave) {
  Prompts p;
  MainWindow w(options(p));
  ASSERT_TRUE(w.open_file(testing::flagship()));
  w.show();
  EXPECT_TRUE(w.close());  // unmodified: no question
  EXPECT_EQ(p.asked, 0);
  w.show();
  w.document()->set_value(JsonPointer("/seed"), 3);
  p.answer = QMessageBox::Cancel;
  EXPECT_FALSE(w.close());
  EXPECT_EQ(p.asked, 1);
  EXPECT_TRUE(w.isVisible());
  p.answer = QMessageBox::Discard;
  EXPECT_TRUE(w.close());
  EXPECT_EQ(p.asked, 2);
}

TEST(MainWindow, SaveAsWritesTheFileAndClearsTheMarker) {
  Prompts p;
  MainWindow w(options(p));
  ASSERT_TRUE(w.open_file(testing::flagship()));
  w.document()->set_value(JsonPointer("/seed"), 4);
  QTemporaryDir dir;
  ASSERT_TRUE(w.save_as(dir.filePath("mine.json")));
  EXPECT_FALSE(w.isWindowModified());
  EXPECT_EQ(w.windowTitle(), "mine.json[*] — Granary");
  EXPECT_FALSE(w.open_file(dir.filePath("missing.json")));
  ASSERT_EQ(p.errors.size(), 1);
  EXPECT_TRUE(p.errors[0].endsWith("missing.json: no such scenario file"));
}

TEST(MainWindow, TheTopologyFollowsTheValidScenario) {
  Prompts p;
  MainWindow w(options(p));
  ASSERT_TRUE(w.open_file(testing::flagship()));
  EXPECT_EQ(w.topology()->node_item_count(models::NodeKind::kClient), 128);
  w.document()->set_value(JsonPointer("/cluster/clients/count"), 32);
  w.document()->validate();
  EXPECT_EQ(w.topology()->node_item_count(models::NodeKind::kClient), 32);
  w.document()->set_value(JsonPointer("/cluster/clients/count"), -1);
  w.document()->validate();
  EXPECT_EQ(w.topology()->node_item_count(models::NodeKind::kClient), 0);
  EXPECT_NE(w.topology()->legend_text().indexOf("cluster.clients.count"), -1);
}

}  // namespace
}  // namespace granary::gui
