// Transport: engine messages between the hosts of a real-mode cluster over a libfabric
// reliable-datagram endpoint (FI_EP_RDM): `tcp;ofi_rxm` on Ethernet and on this machine,
// `verbs;ofi_rxm` on RDMA NICs, chosen by TransportOptions::provider. Each process is one host
// of the world, at the "IP:PORT" its entry in the hosts table gives (the launcher's table,
// realmode/README.md); every host of the table is inserted in the address vector at start, so a
// datagram from an address outside the table is refused before it is read.
//
// Frames (frame.h: versioned, checksummed header; body and payload covered by a crc32c):
//   kEnvelopeType  a message: body = envelope (sender host, destination endpoint, the body's
//                  type and wire size) then the codec's body (codec.h); payload = the message's
//                  bytes. Used when the whole frame fits eager_bytes.
//   kBulkType      a larger message: the envelope and body as above plus a bulk descriptor
//                  (length, crc32c, remote address and key of the sender's registered memory);
//                  the receiver pulls the payload by RMA read (fi_read: the notes measured rxm's
//                  rendezvous sends at 0.1-0.4 GB/s against 1-9 GB/s for RMA), checks its crc,
//                  delivers the message and answers kBulkDoneType so the sender frees it.
//   kAuthHelloType and auth.h's Challenge, Response, Confirm: the cluster-key handshake. The
//                  first message to a peer starts it (Hello); either side's completed handshake
//                  authenticates the pair (the acceptor verified the connector's MAC, the
//                  connector the acceptor's), and until then every other frame from the peer is
//                  held (up to 128; past that refused and logged), then handled once the peer
//                  has authenticated, or refused and logged when it fails, so what a peer
//                  sends to this side's new process is not lost for want of a handshake. (A
//                  frame posted into the old process's connection before the provider saw it
//                  close is lost, as on any connection: up to two in the tests; the services'
//                  timeouts resend.) An
//                  acceptor that refuses a response says so (kAuthDeniedType) so that the connector
//                  fails at once. Hello and Challenge carry the sender's incarnation (a random
//                  number drawn at open) in the header's sequence: a Hello from an authenticated
//                  peer naming another incarnation is a restarted process, and the pair
//                  authenticates again before anything more is sent to it. Each side counts the
//                  pair authenticated only after its own last handshake frame is posted, so no
//                  message overtakes it. A send that fails, or that the provider does not take
//                  within handshake_timeout_s (a dead peer), makes the pair authenticate again
//                  before the next.
// Anything refused — an address outside the table, a frame that does not check, an oversized
// datagram (truncated by the provider), a body that does not decode, a frame from a peer that
// has not authenticated — is dropped, logged with its reason and counted (stats()); it never
// stops the transport.
//
// Memory registration follows what the provider asks (fi_getinfo's mr_mode): with FI_MR_LOCAL
// every buffer a send, receive or read uses is registered; with FI_MR_PROV_KEY the key is the
// provider's; with FI_MR_VIRT_ADDR remote addresses are virtual addresses; with FI_MR_ENDPOINT
// registrations are bound to the endpoint. tcp;ofi_rxm asks for none of these here.
//
// Progress: rxm's data progress is manual, so one thread polls the completion queue and does
// all receiving; sends are posted from the caller's thread (FI_THREAD_SAFE).
//
// Thread-safety: send() from any thread; the deliver and log callbacks run on the progress
// thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/env.h"
#include "realmode/auth.h"
#include "realmode/buffer_pool.h"
#include "realmode/codec.h"
#include "realmode/frame.h"

struct fid_fabric;
struct fid_domain;
struct fid_ep;
struct fid_cq;
struct fid_av;
struct fi_info;

namespace granary::realmode {

inline constexpr uint16_t kAuthHelloType = 0xA000;
// The acceptor's answer to a response that does not check (body: the reason), so that the
// connector fails at once with PermissionDenied instead of waiting out the handshake.
inline constexpr uint16_t kAuthDeniedType = 0xA004;
inline constexpr uint16_t kEnvelopeType = 0xB000;
inline constexpr uint16_t kBulkType = 0xB001;
inline constexpr uint16_t kBulkDoneType = 0xB002;

struct TransportOptions {
  std::string provider = "tcp;ofi_rxm";
  // This process's host, and every host's "IP:PORT" (IPv4), indexed by HostId.
  HostId host = 0;
  std::vector<std::string> hosts;
  // The cluster key every peer must prove it holds.
  ClusterKey key;
  // The largest frame sent in one datagram (the size of each posted receive buffer); larger
  // messages go by RMA.
  size_t eager_bytes = 72 * 1024;
  int receive_buffers = 64;
  // How long a send waits for the peer: for the handshake, and for the provider to take the
  // send (it takes none while it cannot connect); then it fails with Unavailable.
  double handshake_timeout_s = 5.0;
  FrameLimits frame_limits;
  CodecLimits codec_limits;
  // Where bulk receives land (shared with the process's RealEnv::allocate); null: a pool of
  // the transport's own.
  std::shared_ptr<BufferPool> pool;
};

class Transport {
 public:
  // A message for endpoint `to`, from host `from` (authenticated).
  using Deliver = std::function<void(HostId from, std::string to, Message message)>;
  // A refusal or a failure, one line naming the peer and the reason.
  using Log = std::function<void(const std::string& line)>;

  // Opens the endpoint at options.hosts[options.host] and starts the progress thread.
  // InvalidArgument for a bad table or address; NotSupported when the provider is not
  // available; IOError naming the libfabric call otherwise.
  static Result<std::unique_ptr<Transport>> open(TransportOptions options, Deliver deliver,
                                                 Log log);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Sends `message` to endpoint `to` on host `host`, authenticating first when the pair has
  // not: blocks until the handshake is done (PermissionDenied when the peer fails it,
  // Unavailable when it does not answer in time). Then returns once the send is posted; a
  // payload larger than eager_bytes stays referenced until the receiver has pulled it.
  // InvalidArgument for a size-only payload (real mode sends bytes) or an unknown host.
  Status send(HostId host, std::string_view to, const Message& message);
  // True while the pair with `host` is authenticated (a send then needs no handshake and, to a
  // live peer, does not wait); false before, and once a failure reset it.
  bool authenticated(HostId host) const;

  // Posts `bytes` to `host` as one datagram, unframed and without the handshake: for the
  // robustness tests, which play a peer sending garbage.
  Status send_raw(HostId host, std::vector<std::byte> bytes);

  struct Stats {
    uint64_t sent = 0, delivered = 0, bulk_sent = 0, bulk_received = 0;
    uint64_t refused = 0;  // frames dropped (logged)
    uint64_t authenticated_peers = 0;
  };
  Stats stats() const;
  // The provider fi_getinfo chose ("tcp;ofi_rxm") and the mr_mode bits it asked for.
  const std::string& provider() const { return provider_; }
  uint64_t mr_mode() const { return mr_mode_; }

 private:
  struct Op;
  struct Peer;
  struct Registration;

  Transport(TransportOptions options, Deliver deliver, Log log);
  Status start();
  void progress_main();
  void on_completion(Op* op, uint64_t source, size_t length);
  void on_error(Op* op, int err, const std::string& what);
  void on_frame(HostId from, std::span<const std::byte> bytes);
  void on_auth(HostId from, const Frame& frame);
  // The frames held from `from` while it authenticated: handled once it has (in order), or
  // refused when it failed.
  void release_held(HostId from, bool authenticated);
  void on_message(HostId from, const Frame& frame);
  void on_bulk_read(Op* op);
  void post_read(Op* op);  // an RMA read of a bulk region (retried later when the queue is full)
  HostId host_of_address(uint64_t source) const;
  Status post_receive(Op* op);
  // Posts a frame to `host` (the op owns its bytes until completion).
  // Unavailable when the provider takes no send for a while (transport.cc).
  Status post_frame(HostId host, std::vector<std::byte> frame);
  // A send to `host` failed or could not be posted: the pair authenticates again before the
  // next message.
  void lost_connection(HostId host);
  Status authenticate(HostId host);
  Result<std::unique_ptr<Registration>> register_memory(const void* p, size_t n, uint64_t access);
  void refuse(HostId from, const std::string& why);

  TransportOptions options_;
  Deliver deliver_;
  Log log_;
  std::string provider_;
  uint64_t mr_mode_ = 0;
  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_ep* ep_ = nullptr;
  std::vector<uint64_t> addresses_;  // fi_addr_t of each host
  std::vector<std::unique_ptr<Op>> receives_;

  mutable std::mutex mu_;  // peers_, bulk_, stats_, next_key_
  std::condition_variable peers_cv_;
  std::vector<std::unique_ptr<Peer>> peers_;
  std::map<uint64_t, Op*> bulk_;   // large sends, by id, until the receiver pulled them
  std::set<Op*> outstanding_;      // posted sends, held bulks and reads: freed at completion
  std::deque<Op*> pending_reads_;  // progress thread only
  uint64_t next_bulk_ = 1;
  uint64_t next_key_ = 1;
  uint64_t incarnation_ = 0;  // this process's (transport.h), drawn at start()
  Stats stats_;
  bool stop_ = false;
  std::thread progress_;
};

}  // namespace granary::realmode
