// DiskNamespaceStore: a metadata server's namespace on a DiskStore (store/disk_store.h), as
// Lustre's MDS keeps its inodes and their layouts on its MDT. One empty object per file, named
// "ns/" + the path, whose attributes hold the record: "size" (decimal bytes) and, for a file
// with a layout, "layout" ("<stripe size>:<ost>,<ost>,...", decimal). put() is one write of
// no bytes that sets both atomically and returns once durable (a sync write: the journal
// record flushed), so a crash keeps every record put() acknowledged (disk_store.h's contract).
//
// Thread-safety: none; the MetadataService calls put() under its lock, load() runs before it
// starts.
#pragma once

#include <string>

#include "engine/services/mds.h"
#include "engine/store/disk_store.h"

namespace granary::services {

class DiskNamespaceStore final : public MdsNamespaceStore {
 public:
  explicit DiskNamespaceStore(store::DiskStore& store) : store_(store) {}
  // InvalidArgument for a path of more than 1,021 bytes or a layout whose record passes the
  // store's 1,024-byte attribute values; the store's error when the write fails.
  Status put(const std::string& path, const MdsFile& file) override;
  // Every file recorded; Corruption naming the object for a record that does not parse.
  Result<MdsNamespace> load() const;

 private:
  store::DiskStore& store_;
};

}  // namespace granary::services
