// Helpers of the gui tests: shipped scenarios, a document loaded from one, main window options
// that never block on a dialog.
#pragma once

#include <gtest/gtest.h>

#include <QString>
#include <memory>
#include <string>

#include "gui/main_window.h"
#include "gui/scenario_document.h"

namespace granary::gui::testing {

inline QString scenario(const std::string& rel) {
  return QString::fromStdString(std::string(GRANARY_SOURCE_DIR) + "/scenarios/" + rel);
}

// The flagship: 128 DGX A100 nodes, 16 RADOS servers.
inline QString flagship() {
  return scenario("read-storm-128-dgx-a100.json");
}

inline std::unique_ptr<ScenarioDocument> load(const QString& path) {
  auto doc = std::make_unique<ScenarioDocument>();
  const Status s = doc->load(path);
  EXPECT_TRUE(s.ok()) << s.message();
  return doc;
}

// No settings, Discard when asked to save, an error shown fails the test.
inline MainWindowOptions quiet_options() {
  MainWindowOptions o;
  o.use_settings = false;
  o.ask_to_save = [](QWidget*, const QString&) { return QMessageBox::Discard; };
  o.show_error = [](QWidget*, const QString& m) { ADD_FAILURE() << m.toStdString(); };
  return o;
}

}  // namespace granary::gui::testing
