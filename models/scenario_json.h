// Reading scenario files: format 1 ("granary": 1), documented key by key in
// docs/scenario-format.md. Parsing resolves catalog profiles (catalog.h), applies per-field
// overrides and defaults, converts units (MiB, KiB -> bytes) and validates everything, so a
// Scenario that comes back is complete and in range.
//
// Every error is one line naming the file, the JSON path, what was expected and what was
// found: "s.json: cluster.clients.count: expected an integer >= 1, found -3". JSON syntax
// errors name file:line:column. Unknown keys are errors, with the closest known key suggested.
//
// The functions are pure apart from reading files (the scenario and a CRUSH map it names);
// they may be called from several threads at once.
#pragma once

#include <string>
#include <string_view>

#include "engine/status.h"
#include "models/catalog.h"
#include "models/scenario.h"

namespace granary::models {

// The one format version this build reads.
inline constexpr int kScenarioFormatVersion = 1;

// Reads and validates a scenario file. Relative paths inside it (storage.rados.crush_map)
// resolve against the file's directory. Profile names resolve against `catalog` (the built-in
// catalog when not given; catalog.h).
Result<Scenario> load_scenario(const std::string& path);
Result<Scenario> load_scenario(const std::string& path, const Catalog& catalog);

// Validates scenario text. `source_path` names the text in messages and anchors relative
// paths (its directory; the current directory when it has none).
Result<Scenario> parse_scenario(std::string_view json_text, std::string_view source_path);
Result<Scenario> parse_scenario(std::string_view json_text, std::string_view source_path,
                                const Catalog& catalog);

// SHA-256 of `text` (OpenSSL's libcrypto), as 64 lowercase hex digits.
std::string sha256_hex(std::string_view text);

// One line describing a scenario, e.g. "128 clients x 8 a100, 16 storage nodes x 24
// samsung-pm9a3-7.68tb, rados EC 8+3 over rdma, workloads: unet3d".
std::string scenario_summary(const Scenario& scenario);

}  // namespace granary::models
