// gui_tests' main: Qt's offscreen platform unless one is set (gtest_discover_tests runs the
// binary without ctest's environment), one QApplication, QSettings in a temporary directory
// (never the user's), the Granary database ($GRANARY_DB) there too, then GoogleTest.
#include <gtest/gtest.h>

#include <QApplication>
#include <QSettings>
#include <QTemporaryDir>

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QTemporaryDir settings_dir;
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings_dir.path());
  // Every MainWindow records its runs: into a temporary database, never the user's.
  qputenv("GRANARY_DB", (settings_dir.path() + "/granary.sqlite").toUtf8());
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
