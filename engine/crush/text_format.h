// Ceph's text CRUSH map format (what `crushtool -d` prints and `crushtool -c` reads).
//
// parse_text_map builds a CrushMap with the same numbers crushtool's compiler produces:
// weights parsed in single precision and truncated to 16.16, default item weights, bucket ids
// assigned like Ceph's compiler, device-class shadow hierarchies built when the first rule is
// read, choose_args. Errors name the source, line and column, what was expected and what was
// found. write_text_map prints a map exactly as `crushtool -d` does, so a canonical map text
// round-trips byte for byte. Both are pure functions; safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "engine/crush/crush_map.h"
#include "engine/status.h"

namespace granary::crush {

// The largest text map parse_text_map and load_text_map accept (a 10,000-OSD map is 0.6 MB).
constexpr size_t kMaxTextMapBytes = size_t{16} << 20;

// Parses map text; `source` names the input in error messages (a file name, "<stdin>").
// Every id, weight, count and size is checked against crush_map.h's limits before anything
// is allocated for it; the text must be printable (no control bytes other than white space).
Result<CrushMap> parse_text_map(std::string_view text, std::string_view source = "<input>");

// Reads a text map file (a regular file, or a pipe or device read up to kMaxTextMapBytes);
// refuses directories and files over the limit before reading them.
Result<std::string> read_text_map_file(const std::string& path);

// Reads and parses a text map file; a compiled map (crushtool -c) is refused with the
// crushtool command that decompiles it.
Result<CrushMap> load_text_map(const std::string& path);

// Prints the map in crushtool's decompiled format.
std::string write_text_map(const CrushMap& map);

// 16.16 fixed point from a decimal string exactly as crushtool computes it:
// (uint32)(strtof(s) * 65536.0f), single precision, truncated. nullopt when `s` is not a
// non-negative number.
std::optional<uint32_t> parse_fixed_16_16(std::string_view s);

// "%.3f" of a 16.16 weight computed in single precision, as crushtool prints weights
// (including its reading of weights >= 2^31 as negative).
std::string format_fixed_16_16(uint32_t w);

}  // namespace granary::crush
