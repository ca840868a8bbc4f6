#include "engine/services/mds_store.h"

#include <charconv>
#include <string_view>
#include <utility>
#include <vector>

namespace granary::services {
namespace {

constexpr std::string_view kPrefix = "ns/";

bool parse_u64(std::string_view text, uint64_t& out) {
  const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size() && !text.empty();
}

std::string layout_text(const MdsFile& f) {
  std::string t = std::to_string(f.stripe_size_bytes) + ":";
  for (size_t i = 0; i < f.ost_indices.size(); ++i) {
    if (i > 0) t += ",";
    t += std::to_string(f.ost_indices[i]);
  }
  return t;
}

bool parse_layout(std::string_view text, MdsFile& f) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || !parse_u64(text.substr(0, colon), f.stripe_size_bytes)) {
    return false;
  }
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    uint64_t ost = 0;
    if (!parse_u64(rest.substr(0, comma), ost) || ost > UINT32_MAX) return false;
    f.ost_indices.push_back(static_cast<uint32_t>(ost));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
    if (rest.empty()) return false;
  }
  return f.stripe_size_bytes > 0 && !f.ost_indices.empty();
}

}  // namespace

Status DiskNamespaceStore::put(const std::string& path, const MdsFile& file) {
  if (path.empty() || path.size() + kPrefix.size() > 1024) {
    return Status::invalid_argument("the metadata store keeps paths of 1 to " +
                                    std::to_string(1024 - kPrefix.size()) + " bytes, found " +
                                    std::to_string(path.size()));
  }
  store::WriteOptions o;
  o.sync = true;
  o.attrs.emplace_back("size", std::to_string(file.size_bytes));
  if (file.stripe_size_bytes > 0) {
    std::string layout = layout_text(file);
    if (layout.size() > 1024) {
      return Status::invalid_argument("the layout of " + path + " (" +
                                      std::to_string(file.ost_indices.size()) +
                                      " stripes) does not fit a 1,024-byte record");
    }
    o.attrs.emplace_back("layout", std::move(layout));
  }
  return store_.write(std::string(kPrefix) + path, 0, Payload::of(Buffer::zeros(0)), o);
}

Result<MdsNamespace> DiskNamespaceStore::load() const {
  MdsNamespace files;
  for (const std::string& object : store_.list()) {
    if (!std::string_view(object).starts_with(kPrefix)) continue;
    auto bad = [&](const std::string& what) {
      return Status::corruption("metadata record " + object + ": " + what);
    };
    MdsFile f;
    Result<std::string> size = store_.attr(object, "size");
    if (!size.ok()) return bad("no size: " + size.status().message());
    if (!parse_u64(*size, f.size_bytes)) return bad("size \"" + *size + "\" is not a number");
    Result<std::string> layout = store_.attr(object, "layout");
    if (layout.ok() && !parse_layout(*layout, f)) {
      return bad("layout \"" + *layout + "\" is not <stripe size>:<ost>,...");
    }
    if (!layout.ok() && layout.status().code() != Status::Code::kNotFound) return layout.status();
    files.emplace(object.substr(kPrefix.size()), std::move(f));
  }
  return files;
}

}  // namespace granary::services
