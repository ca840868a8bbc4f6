// ScenarioDocument: load/save, undoable edits, validation with the JSON path of the error.
#include "gui/scenario_document.h"

#include <gtest/gtest.h>

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "tests/gui/gui_test_util.h"

namespace granary::gui {
namespace {

TEST(ScenarioDocument, LoadsAShippedScenarioThatValidates) {
  auto doc = testing::load(testing::scenario("ci/checkpoint-llama3-70b.json"));
  EXPECT_EQ(doc->json()["cluster"]["clients"]["count"], 128);
  EXPECT_FALSE(doc->is_modified());
  const Validation& v = doc->validate();
  EXPECT_TRUE(v.ok) << v.message;
  EXPECT_NE(v.summary.find("128 clients"), std::string::npos) << v.summary;
  ASSERT_TRUE(v.topology.has_value());
  EXPECT_EQ(v.topology->clients.size(), 128u);
}

TEST(ScenarioDocument, EditsAreUndoable) {
  auto doc = testing::load(testing::flagship());
  QSignalSpy changed(doc.get(), &ScenarioDocument::changed);
  doc->set_value(JsonPointer("/cluster/clients/count"), 64);
  EXPECT_EQ(doc->json()["cluster"]["clients"]["count"], 64);
  EXPECT_TRUE(doc->is_modified());
  EXPECT_EQ(changed.count(), 1);
  doc->remove_value(JsonPointer("/cluster/clients/memory_gib"));
  EXPECT_FALSE(doc->json()["cluster"]["clients"].contains("memory_gib"));
  doc->undo_stack()->undo();
  EXPECT_EQ(doc->json()["cluster"]["clients"]["memory_gib"], 1024);
  doc->undo_stack()->undo();
  EXPECT_EQ(doc->json()["cluster"]["clients"]["count"], 128);
  EXPECT_FALSE(doc->is_modified());
  doc->undo_stack()->redo();
  EXPECT_EQ(doc->json()["cluster"]["clients"]["count"], 64);
  // An edit that changes nothing is no step.
  const int steps = doc->undo_stack()->count();
  doc->set_value(JsonPointer("/cluster/clients/count"), 64);
  EXPECT_EQ(doc->undo_stack()->count(), steps);
}

TEST(ScenarioDocument, ValidationNamesTheJsonPathOfTheError) {
  auto doc = testing::load(testing::flagship());
  doc->set_value(JsonPointer("/cluster/clients/count"), 0);
  QSignalSpy validated(doc.get(), &ScenarioDocument::validated);
  const Validation& v = doc->validate();
  EXPECT_EQ(validated.count(), 1);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.json_path, "cluster.clients.count");
  ASSERT_TRUE(v.pointer.has_value());
  EXPECT_EQ(v.pointer->to_string(), "/cluster/clients/count");
  EXPECT_NE(v.message.find("expected an integer in 1..65536, found 0"), std::string::npos)
      << v.message;
  EXPECT_EQ(v.message.rfind(doc->source_name() + ": ", 0), 0u) << v.message;  // names the file
}

// What the cluster plan refuses (as `granary validate` does) is an error too: carry_data on a
// run holding far more than 1 GiB.
TEST(ScenarioDocument, ValidationIncludesTheClusterPlan) {
  auto doc = testing::load(testing::flagship());
  doc->set_value(JsonPointer("/simulation/carry_data"), true);
  const Validation& v = doc->validate();
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.json_path, "simulation.carry_data") << v.message;
  EXPECT_NE(v.message.find("at most 1 GiB"), std::string::npos) << v.message;
}

TEST(ScenarioDocument, LoadErrorsNameTheFileAndWhatWentWrong) {
  ScenarioDocument doc;
  const Status missing = doc.load("/nonexistent/s.json");
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.message(), "/nonexistent/s.json: no such scenario file");
  QTemporaryDir dir;
  const QString bad = dir.filePath("bad.json");
  QFile f(bad);
  ASSERT_TRUE(f.open(QIODevice::WriteOnly));
  f.write("{\n  \"granary\": 1,\n  \"name\" 3\n}\n");
  f.close();
  const Status syntax = doc.load(bad);
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.message().rfind(bad.toStdString() + ":3:10: invalid JSON: ", 0), 0u)
      << syntax.message();
  EXPECT_EQ(doc.json()["name"], "new-scenario");  // unchanged
}

TEST(ScenarioDocument, SaveKeepsTheKeyOrderAndClearsTheModifiedFlag) {
  auto doc = testing::load(testing::flagship());
  doc->set_value(JsonPointer("/seed"), 7);
  QTemporaryDir dir;
  const QString out = dir.filePath("copy.json");
  ASSERT_TRUE(doc->save(out).ok());
  EXPECT_FALSE(doc->is_modified());
  EXPECT_EQ(doc->path(), out);
  ScenarioDocument again;
  ASSERT_TRUE(again.load(out).ok());
  EXPECT_EQ(again.json(), doc->json());
  std::vector<std::string> keys;
  for (const auto& [k, v] : again.json().items()) keys.push_back(k);
  EXPECT_EQ(keys.front(), "granary");
  EXPECT_EQ(keys[1], "name");
  EXPECT_EQ(again.json()["seed"], 7);
  EXPECT_FALSE(doc->save("/nonexistent/dir/s.json").ok());
}

TEST(ScenarioDocument, NewScenarioIsValid) {
  ScenarioDocument doc;
  const Validation& v = doc.validate();
  EXPECT_TRUE(v.ok) << v.message;
}

TEST(JsonPath, ComesFromTheMessage) {
  EXPECT_EQ(json_path_of_message("s.json: workloads[1].files: expected x", "s.json"),
            "workloads[1].files");
  EXPECT_EQ(json_path_of_message("s.json: cluster[\"odd key\"]: unknown key", "s.json"),
            "cluster[\"odd key\"]");
  EXPECT_EQ(json_path_of_message("s.json: granary: unsupported format version 2", "s.json"),
            "granary");
  EXPECT_EQ(json_path_of_message("s.json:3:10: invalid JSON: syntax error", "s.json"), "");
  EXPECT_EQ(json_path_of_message("s.json: expected a scenario file of at most 64 MiB", "s.json"),
            "");
  EXPECT_EQ(json_path_of_message("cluster.fabric.rails: expected x", "s.json"),
            "cluster.fabric.rails");
  EXPECT_EQ(pointer_of_json_path("workloads[1].sample_size_mib.mean")->to_string(),
            "/workloads/1/sample_size_mib/mean");
  EXPECT_EQ(pointer_of_json_path("cluster[\"odd key\"]")->to_string(), "/cluster/odd key");
  EXPECT_FALSE(pointer_of_json_path("not a path").has_value());
}

}  // namespace
}  // namespace granary::gui
