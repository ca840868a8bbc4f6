// The placement interface: how an object name becomes an ordered set of devices.
//
// Every placement policy works in two steps, as Ceph and Swift both do: an object name hashes
// to one of a fixed number of groups (Ceph placement groups, Swift partitions), and each group
// maps to an ordered list of devices (primary first). Policies: CRUSH pools
// (crush_pool.h) and the consistent-hash ring (ring.h).
//
// Implementations are immutable after construction but may keep scratch state for mapping,
// so a Placement object is not thread-safe: use one per thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace granary::placement {

// A position that no device could fill (erasure-coded placements keep positions fixed).
constexpr int32_t kNoDevice = 0x7fffffff;

class Placement {
 public:
  virtual ~Placement() = default;

  // Short description, e.g. "crush pool 1 rule 0 size 3" or "ring 2^10 partitions x 3".
  virtual std::string describe() const = 0;
  // Number of groups objects are spread over.
  virtual uint32_t num_groups() const = 0;
  // The group an object name falls in.
  virtual uint32_t group_of(std::string_view object_name) const = 0;
  // The devices holding `group`, primary first. Positional policies (erasure coding) may
  // return kNoDevice for a position they cannot fill; others return only real devices and
  // possibly fewer than the replica count.
  virtual void devices_of(uint32_t group, std::vector<int32_t>& out) = 0;
  // Number of replicas (or k+m shards) each group asks for.
  virtual int replicas() const = 0;
  // Device ids range over [0, device_id_bound()).
  virtual int32_t device_id_bound() const = 0;
  // The share of data each device should hold in a perfect placement, proportional to its
  // effective weight (0 for out or absent devices). Size device_id_bound().
  virtual std::vector<double> target_shares() const = 0;
  // The failure domain the policy keeps replicas apart in (the host, rack or zone of the
  // device), as an opaque id; -1 when the policy has none.
  virtual int64_t failure_domain(int32_t device) const = 0;
  // The group's interval: a number that changes whenever the group's devices change (Ceph's
  // `same_interval_since`), so that an OSD or a client can tell that an operation began under
  // another set of devices. Placements that never change keep the default, 0.
  virtual uint64_t interval_of(uint32_t /*group*/) const { return 0; }
};

}  // namespace granary::placement
