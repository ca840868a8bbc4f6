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
// "an empty array", "-3", "\"text\"", "true"); a long string is shortened by quote().
std::string describe(const nlohmann::json& value);

// Where byte `offset` of `text` is: its line and column, both from 1 (an offset past the end:
// the end). How syntax errors are placed ("s.json:3:10: invalid JSON: ...").
struct TextPosition {
  size_t line = 1, column = 1;
};
TextPosition text_position(std::string_view text, size_t offset);

// The longest text, in characters, that messages echo before shortening it.
inline constexpr size_t kEchoChars = 30;

// Offset of the first byte of `text` that does not start (or continue) a well-formed UTF-8
// sequence (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF); nullopt when
// the whole text is valid UTF-8.
std::optional<size_t> invalid_utf8_offset(std::string_view text);

// `text` made safe for a one-line message: control characters as JSON escapes ("\n",
// "\u0001"), bytes that are not valid UTF-8 as "\xff", at most `max_chars` characters kept,
// then "…" when shortened. Linear in the characters kept. quote() also escapes its quote
// character and backslashes.
std::string printable(std::string_view text, size_t max_chars = kEchoChars);

// A string value as messages echo it: "\"text\"", or for a long one
// "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…\" (a string of 1048576 bytes)"; `mark` is the quote
// character ('\'' for names, as in "workload 'unet3d'"); file paths keep more characters.
std::string quote(std::string_view text, char mark = '"', size_t max_chars = kEchoChars);

// "expected valid UTF-8 text, found invalid byte 0xff at offset 3" for a text that is not
// valid UTF-8; nullopt for one that is.
std::optional<std::string> utf8_problem(std::string_view text);

// "cluster" + "clients" -> "cluster.clients"; a key with odd characters, or a long one, is
// quoted and shortened (`cluster["odd key"]`) so that a path stays one line.
std::string join(const std::string& path, std::string_view key);

// "a, b, c".
std::string list(const std::vector<std::string>& names);

// Optimal string alignment distance (Levenshtein plus adjacent transpositions), ignoring case.
size_t edit_distance(std::string_view a, std::string_view b);

// The known name closest to `name` when it is close enough to be a typo of it. Names much
// longer than every known one are never close: no distance is computed for them.
std::optional<std::string> closest(std::string_view name,
                                   const std::vector<std::string_view>& known);

// What follows "<path>: " for a key that is not one of `known`:
// "unknown key (did you mean 'accelerator'?)", or "unknown key (expected one of: a, b)".
std::string unknown_key(std::string_view key, const std::vector<std::string_view>& known);

}  // namespace granary::models::json_diag
