// Helpers of the gui tests: shipped scenarios, a document loaded from one.
#pragma once

#include <gtest/gtest.h>

#include <QString>
#include <memory>
#include <string>

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

}  // namespace granary::gui::testing
