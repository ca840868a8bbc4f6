// Pieces of the one-line error messages that the JSON readers of models/ share (scenario files,
// scenario expectations): how a found value is described, how a JSON path is written, and the
// closest known name suggested for an unknown key. docs/scenario-format.md, "Errors".
//
// Pure functions; safe to call from several threads at once.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace granary::models::json_diag {

// A JSON value as the "found ..." part of a message: short and on one line ("an object",
// "an empty array", "-3", "\"text\"", "true").
std::string describe(const nlohmann::json& value);

// "cluster" + "clients" -> "cluster.clients"; a key with odd characters is quoted
// (`cluster["odd key"]`) so that a path stays one line.
std::string join(const std::string& path, std::string_view key);

// "a, b, c".
std::string list(const std::vector<std::string>& names);

// Optimal string alignment distance (Levenshtein plus adjacent transpositions), ignoring case.
size_t edit_distance(std::string_view a, std::string_view b);

// The known name closest to `name` when it is close enough to be a typo of it.
std::optional<std::string> closest(std::string_view name,
                                   const std::vector<std::string_view>& known);

// What follows "<path>: " for a key that is not one of `known`:
// "unknown key (did you mean 'accelerator'?)", or "unknown key (expected one of: a, b)".
std::string unknown_key(std::string_view key, const std::vector<std::string_view>& known);

}  // namespace granary::models::json_diag
