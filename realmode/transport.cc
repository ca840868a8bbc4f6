// Transport (transport.h): libfabric RDM endpoint, frames, the handshake, bulk by RMA read.
#include "realmode/transport.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <openssl/rand.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <utility>

#include "engine/store/crc32c.h"
#include "realmode/wire.h"

namespace granary::realmode {

namespace {

std::string fabric_error(const char* call, int ret) {
  return std::string(call) + ": " + fi_strerror(ret < 0 ? -ret : ret);
}

// "IP:PORT" (IPv4) to a socket address.
Result<sockaddr_in> parse_address(const std::string& text) {
  const size_t colon = text.rfind(':');
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return Status::invalid_argument("address '" + text + "': expected IP:PORT");
  }
  const std::string ip = text.substr(0, colon), port = text.substr(colon + 1);
  if (inet_pton(AF_INET, ip.c_str(), &sa.sin_addr) != 1) {
    return Status::invalid_argument("address '" + text + "': '" + ip + "' is not an IPv4 address");
  }
  char* end = nullptr;
  const unsigned long p = std::strtoul(port.c_str(), &end, 10);
  if (*end != '\0' || p == 0 || p > 65535) {
    return Status::invalid_argument("address '" + text + "': port '" + port +
                                    "' is not in 1..65535");
  }
  sa.sin_port = htons(static_cast<uint16_t>(p));
  return sa;
}

// Debian's libfabric links the psm provider's libinfinipath, which installs handlers for
// SIGINT, SIGTERM, SIGSEGV and SIGBUS when it is loaded that call exit(): in a process with
// threads that deadlocks in the exit handlers (a daemon told to stop, or `timeout`, hangs) and
// it hides a crash's signal. Those handlers, and only those, go back to the default.
void drop_infinipath_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGSEGV, SIGBUS}) {
      struct sigaction now {};
      if (sigaction(sig, nullptr, &now) != 0) continue;
      const void* handler = (now.sa_flags & SA_SIGINFO) != 0
                                ? reinterpret_cast<const void*>(now.sa_sigaction)
                                : reinterpret_cast<const void*>(now.sa_handler);
      if (handler == reinterpret_cast<const void*>(SIG_DFL) ||
          handler == reinterpret_cast<const void*>(SIG_IGN)) {
        continue;
      }
      Dl_info where{};
      if (dladdr(handler, &where) != 0 && where.dli_fname != nullptr &&
          std::strstr(where.dli_fname, "libinfinipath") != nullptr) {
        std::signal(sig, SIG_DFL);
      }
    }
  });
}

// The transport whose progress thread this is (null on other threads).
thread_local const Transport* t_progress_of = nullptr;

bool is_auth(uint16_t type) {
  return type == kAuthHelloType || type == kAuthChallengeType || type == kAuthResponseType ||
         type == kAuthConfirmType || type == kAuthDeniedType;
}

// The envelope in front of a message frame's body (transport.h).
struct Envelope {
  int32_t from = 0;
  std::string to;
  uint16_t body_type = 0;
  uint64_t header_bytes = 0;
  // kBulkType only: the region the receiver reads.
  uint64_t bulk_bytes = 0;
  uint32_t bulk_crc = 0;
  uint64_t bulk_address = 0;
  uint64_t bulk_key = 0;
  uint64_t bulk_id = 0;
  uint32_t body_in_bulk = 0;  // the region's first bytes are the body (too large to go inline)
};

// Frame body: u32 envelope length, the envelope, the message body (unless in the bulk region).
std::vector<std::byte> frame_body(const Envelope& e, bool bulk, std::span<const std::byte> body) {
  WireWriter w;
  w.i32(e.from);
  w.string(e.to);
  w.u16(e.body_type);
  w.u64(e.header_bytes);
  if (bulk) {
    w.u64(e.bulk_bytes);
    w.u32(e.bulk_crc);
    w.u64(e.bulk_address);
    w.u64(e.bulk_key);
    w.u64(e.bulk_id);
    w.u32(e.body_in_bulk);
  }
  const std::vector<std::byte>& env = w.bytes();
  WireWriter len;
  len.u32(static_cast<uint32_t>(env.size()));
  std::vector<std::byte> out = len.take();
  out.insert(out.end(), env.begin(), env.end());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

Result<std::pair<Envelope, std::span<const std::byte>>> parse_envelope(
    std::span<const std::byte> body, bool bulk, const WireReader::Limits& limits) {
  WireReader r(body, limits);
  uint32_t n = 0;
  if (!r.u32("envelope.length", &n)) return r.status();
  if (n > body.size() - 4) {
    return Status::invalid_argument("envelope.length: " + std::to_string(n) +
                                    " bytes, more than the " + std::to_string(body.size() - 4) +
                                    " left in the frame");
  }
  WireReader e(body.subspan(4, n), limits);
  Envelope v;
  e.i32("envelope.from", &v.from);
  e.string("envelope.to", &v.to);
  e.u16("envelope.body_type", &v.body_type);
  e.u64("envelope.header_bytes", &v.header_bytes);
  if (bulk) {
    e.u64("envelope.bulk_bytes", &v.bulk_bytes);
    e.u32("envelope.bulk_crc", &v.bulk_crc);
    e.u64("envelope.bulk_address", &v.bulk_address);
    e.u64("envelope.bulk_key", &v.bulk_key);
    e.u64("envelope.bulk_id", &v.bulk_id);
    e.u32("envelope.body_in_bulk", &v.body_in_bulk);
  }
  if (Status s = e.finish(); !s.ok()) return s;
  return std::make_pair(std::move(v), body.subspan(4 + n));
}

}  // namespace

struct Transport::Registration {
  fid_mr* mr = nullptr;
  void* desc = nullptr;
  uint64_t key = 0;
  uint64_t address = 0;  // what a peer names the region's first byte with
  ~Registration() {
    if (mr != nullptr) fi_close(&mr->fid);
  }
};

struct Transport::Op {
  // libfabric's per-operation context (FI_CONTEXT2), first so that the completion's op_context
  // leads back here.
  struct Context {
    fi_context2 ctx;
    Op* op;
  } context{};
  enum class Kind { kReceive, kSend, kBulkHold, kBulkRead } kind = Kind::kSend;
  std::vector<std::byte> bytes;         // a receive buffer, or a frame being sent
  std::unique_ptr<Registration> local;  // of bytes or into (FI_MR_LOCAL)
  // kBulkHold: the region a peer reads, kept until its kBulkDoneType.
  HostId peer = -1;
  Buffer held;
  std::unique_ptr<Registration> remote;
  // kBulkRead: the message whose region is being pulled.
  Envelope envelope;
  std::vector<std::byte> inline_body;
  MutableBuffer into;

  explicit Op(Kind k) : kind(k) { context.op = this; }
  void* ctx() { return &context; }
};

// Frames an unauthenticated peer may have held for it while it authenticates (transport.h).
constexpr size_t kHeldFrames = 128;

struct Transport::Peer {
  bool authenticated = false;
  std::vector<std::vector<std::byte>> held;  // its frames that came before it authenticated
  bool hello_sent = false;
  // The peer process's incarnation (transport.h) when it authenticated, and the ones its
  // Hello and its Challenge named while a handshake is under way.
  uint64_t incarnation = 0, hello_incarnation = 0, challenge_incarnation = 0;
  std::string failure;  // the connector's handshake failed: why
  std::unique_ptr<AcceptorHandshake> acceptor;
  std::unique_ptr<ConnectorHandshake> connector;
  uint64_t next_sequence = 1;
  // Not authenticated, no handshake of ours under way (the caller holds mu_).
  void forget();
};

Transport::Transport(TransportOptions options, Deliver deliver, Log log)
    : options_(std::move(options)), deliver_(std::move(deliver)), log_(std::move(log)) {
  if (!options_.pool) options_.pool = BufferPool::create();
}

Result<std::unique_ptr<Transport>> Transport::open(TransportOptions options, Deliver deliver,
                                                   Log log) {
  drop_infinipath_signal_handlers();
  if (options.hosts.empty() || options.host < 0 ||
      static_cast<size_t>(options.host) >= options.hosts.size()) {
    return Status::invalid_argument("transport: host " + std::to_string(options.host) +
                                    " is not in the hosts table of " +
                                    std::to_string(options.hosts.size()));
  }
  if (options.eager_bytes < kFrameHeaderBytes + 1024 || options.receive_buffers < 1) {
    return Status::invalid_argument(
        "transport: eager_bytes must be at least 1 KiB past the frame header and "
        "receive_buffers at least 1");
  }
  if (!log) {
    log = [](const std::string& line) {
      std::fprintf(stderr, "granary transport: %s\n", line.c_str());
    };
  }
  std::unique_ptr<Transport> t(
      new Transport(std::move(options), std::move(deliver), std::move(log)));
  if (Status s = t->start(); !s.ok()) return s;
  return t;
}

Status Transport::start() {
  while (incarnation_ == 0) {
    if (RAND_bytes(reinterpret_cast<unsigned char*>(&incarnation_), sizeof incarnation_) != 1) {
      return Status::io_error("transport: the random number generator failed");
    }
  }
  std::vector<sockaddr_in> table;
  for (const std::string& h : options_.hosts) {
    Result<sockaddr_in> sa = parse_address(h);
    if (!sa.ok()) return sa.status();
    table.push_back(*sa);
  }
  const std::string& me = options_.hosts[static_cast<size_t>(options_.host)];
  const size_t colon = me.rfind(':');
  const std::string node = me.substr(0, colon), service = me.substr(colon + 1);

  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_RMA | FI_READ | FI_REMOTE_READ | FI_SOURCE;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->addr_format = FI_SOCKADDR_IN;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR | FI_MR_ENDPOINT;
  hints->domain_attr->threading = FI_THREAD_SAFE;
  hints->tx_attr->msg_order = FI_ORDER_SAS;
  hints->rx_attr->msg_order = FI_ORDER_SAS;
  hints->fabric_attr->prov_name = strdup(options_.provider.c_str());
  int ret = fi_getinfo(FI_VERSION(1, 9), node.c_str(), service.c_str(), FI_SOURCE, hints, &info_);
  fi_freeinfo(hints);
  if (ret != 0) {
    info_ = nullptr;
    return Status::not_supported("transport: provider '" + options_.provider +
                                 "' offers no reliable-datagram endpoint at " + me + " (" +
                                 fabric_error("fi_getinfo", ret) + ")");
  }
  provider_ = info_->fabric_attr->prov_name;
  mr_mode_ = static_cast<uint64_t>(info_->domain_attr->mr_mode);
  if ((ret = fi_fabric(info_->fabric_attr, &fabric_, nullptr)) != 0 ||
      (ret = fi_domain(fabric_, info_, &domain_, nullptr)) != 0) {
    return Status::io_error("transport at " + me + ": " + fabric_error("fi_fabric/fi_domain", ret));
  }
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  av_attr.count = table.size();
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_MSG;
  cq_attr.wait_obj = FI_WAIT_UNSPEC;
  cq_attr.size = static_cast<size_t>(options_.receive_buffers) * 4 + 256;
  if ((ret = fi_av_open(domain_, &av_attr, &av_, nullptr)) != 0 ||
      (ret = fi_cq_open(domain_, &cq_attr, &cq_, nullptr)) != 0 ||
      (ret = fi_endpoint(domain_, info_, &ep_, nullptr)) != 0 ||
      (ret = fi_ep_bind(ep_, &av_->fid, 0)) != 0 ||
      (ret = fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV)) != 0 ||
      (ret = fi_enable(ep_)) != 0) {
    return Status::io_error("transport at " + me + ": " +
                            fabric_error("opening the endpoint", ret));
  }
  for (size_t i = 0; i < table.size(); ++i) {
    fi_addr_t a = FI_ADDR_UNSPEC;
    if (fi_av_insert(av_, &table[i], 1, &a, 0, nullptr) != 1) {
      return Status::io_error("transport: fi_av_insert of host " + std::to_string(i) + " (" +
                              options_.hosts[i] + ") failed");
    }
    addresses_.push_back(a);
    peers_.push_back(std::make_unique<Peer>());
  }
  for (int i = 0; i < options_.receive_buffers; ++i) {
    auto op = std::make_unique<Op>(Op::Kind::kReceive);
    op->bytes.resize(options_.eager_bytes);
    if (mr_mode_ & FI_MR_LOCAL) {
      Result<std::unique_ptr<Registration>> r =
          register_memory(op->bytes.data(), op->bytes.size(), FI_RECV);
      if (!r.ok()) return r.status();
      op->local = std::move(r).value();
    }
    if (Status s = post_receive(op.get()); !s.ok()) return s;
    receives_.push_back(std::move(op));
  }
  progress_ = std::thread(&Transport::progress_main, this);
  return Status::ok_status();
}

Transport::~Transport() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  peers_cv_.notify_all();
  if (progress_.joinable()) progress_.join();
  if (ep_ != nullptr) fi_close(&ep_->fid);
  receives_.clear();
  for (Op* op : outstanding_) delete op;
  outstanding_.clear();
  if (cq_ != nullptr) fi_close(&cq_->fid);
  if (av_ != nullptr) fi_close(&av_->fid);
  if (domain_ != nullptr) fi_close(&domain_->fid);
  if (fabric_ != nullptr) fi_close(&fabric_->fid);
  if (info_ != nullptr) fi_freeinfo(info_);
}

Result<std::unique_ptr<Transport::Registration>> Transport::register_memory(const void* p, size_t n,
                                                                            uint64_t access) {
  auto r = std::make_unique<Registration>();
  uint64_t requested_key = 0;
  {
    std::lock_guard lock(mu_);
    requested_key = next_key_++;
  }
  int ret = fi_mr_reg(domain_, p, n, access, 0, requested_key, 0, &r->mr, nullptr);
  if (ret != 0) {
    r->mr = nullptr;
    return Status::io_error("transport: " + fabric_error("fi_mr_reg", ret) + " (" +
                            std::to_string(n) + " bytes)");
  }
  if (mr_mode_ & FI_MR_ENDPOINT) {
    if ((ret = fi_mr_bind(r->mr, &ep_->fid, 0)) != 0 || (ret = fi_mr_enable(r->mr)) != 0) {
      return Status::io_error("transport: " + fabric_error("fi_mr_bind/fi_mr_enable", ret));
    }
  }
  r->desc = fi_mr_desc(r->mr);
  r->key = fi_mr_key(r->mr);
  r->address = (mr_mode_ & FI_MR_VIRT_ADDR) ? reinterpret_cast<uint64_t>(p) : 0;
  return r;
}

Status Transport::post_receive(Op* op) {
  for (;;) {
    const ssize_t ret = fi_recv(ep_, op->bytes.data(), op->bytes.size(),
                                op->local ? op->local->desc : nullptr, FI_ADDR_UNSPEC, op->ctx());
    if (ret == 0) return Status::ok_status();
    if (ret != -FI_EAGAIN)
      return Status::io_error("transport: " + fabric_error("fi_recv", static_cast<int>(ret)));
    std::this_thread::yield();
  }
}

Status Transport::post_frame(HostId host, std::vector<std::byte> frame) {
  auto op = std::make_unique<Op>(Op::Kind::kSend);
  op->bytes = std::move(frame);
  op->peer = host;
  if (mr_mode_ & FI_MR_LOCAL) {
    Result<std::unique_ptr<Registration>> r =
        register_memory(op->bytes.data(), op->bytes.size(), FI_SEND);
    if (!r.ok()) return r.status();
    op->local = std::move(r).value();
  }
  Op* raw = op.release();
  {
    std::lock_guard lock(mu_);
    outstanding_.insert(raw);
  }
  // The provider refuses a send (FI_EAGAIN) while its queue is full, and for as long as it
  // cannot connect to the peer: a dead peer would hold the caller for ever. A task waits up to
  // handshake_timeout_s; the progress thread, which must go back to its completions, 0.2 s.
  const bool progress_thread = t_progress_of == this;
  const double wait_s = progress_thread ? 0.2 : options_.handshake_timeout_s;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(wait_s));
  const std::string who =
      "host " + std::to_string(host) + " (" + options_.hosts[static_cast<size_t>(host)] + ")";
  for (;;) {
    const ssize_t ret =
        fi_send(ep_, raw->bytes.data(), raw->bytes.size(), raw->local ? raw->local->desc : nullptr,
                addresses_[static_cast<size_t>(host)], raw->ctx());
    if (ret == 0) return Status::ok_status();
    const bool timed_out = ret == -FI_EAGAIN && std::chrono::steady_clock::now() >= deadline;
    if (ret != -FI_EAGAIN || timed_out) {
      {
        std::lock_guard lock(mu_);
        outstanding_.erase(raw);
        delete raw;
      }
      if (timed_out) {
        lost_connection(host);
        return Status::unavailable("transport: " + who + " took no send for " +
                                   std::to_string(wait_s) + " s (down or unreachable)");
      }
      return Status::io_error("transport: send to " + who + ": " +
                              fabric_error("fi_send", static_cast<int>(ret)));
    }
    std::this_thread::yield();  // the progress thread frees room
  }
}

void Transport::Peer::forget() {
  authenticated = false;
  hello_sent = false;
  connector.reset();
}

void Transport::lost_connection(HostId host) {
  std::lock_guard lock(mu_);
  // The next send authenticates first: if the peer restarted meanwhile, nothing sent to it
  // goes before its handshake (and is refused).
  peers_[static_cast<size_t>(host)]->forget();
}

void Transport::refuse(HostId from, const std::string& why) {
  {
    std::lock_guard lock(mu_);
    ++stats_.refused;
  }
  const std::string who = from >= 0 ? "host " + std::to_string(from) + " (" +
                                          options_.hosts[static_cast<size_t>(from)] + ")"
                                    : std::string("an address outside the hosts table");
  log_("refused a frame from " + who + ": " + why);
}

Transport::Stats Transport::stats() const {
  std::lock_guard lock(mu_);
  Stats s = stats_;
  s.authenticated_peers = 0;
  for (const auto& p : peers_) s.authenticated_peers += p->authenticated ? 1 : 0;
  return s;
}

// ---- the handshake

bool Transport::authenticated(HostId host) const {
  if (host < 0 || static_cast<size_t>(host) >= peers_.size()) return false;
  std::lock_guard lock(mu_);
  return peers_[static_cast<size_t>(host)]->authenticated;
}

Status Transport::authenticate(HostId host) {
  Peer* peer = peers_[static_cast<size_t>(host)].get();
  bool start = false;
  {
    std::unique_lock lock(mu_);
    if (peer->authenticated) return Status::ok_status();
    if (!peer->hello_sent) {
      peer->hello_sent = true;
      peer->failure.clear();
      peer->connector = std::make_unique<ConnectorHandshake>(
          options_.key, "host" + std::to_string(options_.host));
      start = true;
    }
  }
  if (start) {
    if (Status s = post_frame(host, encode_frame(kAuthHelloType, incarnation_, {}, {})); !s.ok()) {
      std::lock_guard lock(mu_);
      peer->hello_sent = false;
      return s;
    }
  }
  std::unique_lock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(options_.handshake_timeout_s));
  const bool done = peers_cv_.wait_until(
      lock, deadline, [&] { return peer->authenticated || !peer->failure.empty() || stop_; });
  if (peer->authenticated) return Status::ok_status();
  const std::string who =
      "host " + std::to_string(host) + " (" + options_.hosts[static_cast<size_t>(host)] + ")";
  peer->hello_sent = false;  // the next send tries again
  if (!peer->failure.empty()) {
    return Status::permission_denied(who + ": " + peer->failure);
  }
  (void)done;
  return Status::unavailable(who + " did not complete the cluster-key handshake in " +
                             std::to_string(options_.handshake_timeout_s) + " s");
}

void Transport::on_auth(HostId from, const Frame& frame) {
  Peer& peer = *peers_[static_cast<size_t>(from)];
  std::unique_lock lock(mu_);
  const uint16_t type = frame.header.type;
  if (type == kAuthHelloType) {
    const uint64_t incarnation = frame.header.sequence;
    bool restarted = false;
    if (peer.authenticated && incarnation != peer.incarnation) {
      // The peer is a new process at the same address: nothing is sent to it until it has
      // proved the key again (our sends wait in authenticate()).
      restarted = true;
      peer.forget();
      peer.failure.clear();
    }
    peer.hello_incarnation = incarnation;
    peer.acceptor = std::make_unique<AcceptorHandshake>(options_.key);
    Result<std::vector<std::byte>> c = peer.acceptor->challenge();
    lock.unlock();
    if (restarted) log_("host " + std::to_string(from) + " restarted: authenticating it again");
    if (!c.ok())
      return log_("handshake with host " + std::to_string(from) + ": " + c.status().message());
    (void)post_frame(from, encode_frame(kAuthChallengeType, incarnation_, *c, {}));
    return;
  }
  if (type == kAuthChallengeType) {
    if (!peer.connector) {
      lock.unlock();
      return refuse(from, "a challenge to a handshake it never started");
    }
    peer.challenge_incarnation = frame.header.sequence;
    Result<std::vector<std::byte>> r = peer.connector->respond(frame.body);
    if (!r.ok()) {
      peer.failure = r.status().message();
      peers_cv_.notify_all();
      lock.unlock();
      release_held(from, false);
      return refuse(from, r.status().message());
    }
    lock.unlock();
    (void)post_frame(from, encode_frame(kAuthResponseType, 0, *r, {}));
    return;
  }
  if (type == kAuthResponseType) {
    if (!peer.acceptor) {
      lock.unlock();
      return refuse(from, "a handshake response without a challenge");
    }
    Result<std::string> name = peer.acceptor->verify(frame.body);
    const std::string expected = "host" + std::to_string(from);
    if (!name.ok() || *name != expected) {
      peer.acceptor.reset();
      lock.unlock();
      const std::string why =
          name.ok() ? "authenticated as '" + *name + "' from the address of '" + expected + "'"
                    : name.status().message();
      WireWriter w;
      w.string(why);
      (void)post_frame(from, encode_frame(kAuthDeniedType, 0, w.bytes(), {}));
      release_held(from, false);
      return refuse(from, why);
    }
    Result<std::vector<std::byte>> confirm = peer.acceptor->confirm();
    peer.acceptor.reset();
    const uint64_t incarnation = peer.hello_incarnation;
    lock.unlock();
    // The confirmation is posted before the pair counts as authenticated, so that no message
    // of ours (posted once it does) overtakes it: the peer would refuse it.
    if (confirm.ok()) (void)post_frame(from, encode_frame(kAuthConfirmType, 0, *confirm, {}));
    lock.lock();
    peer.authenticated = true;
    peer.incarnation = incarnation;
    peers_cv_.notify_all();
    lock.unlock();
    release_held(from, true);
    return;
  }
  if (type == kAuthDeniedType) {
    WireReader r(frame.body);
    std::string why;
    r.string("denied.reason", &why);
    if (!peer.connector || !r.finish().ok()) {
      lock.unlock();
      return refuse(from, "a malformed or unasked-for handshake denial");
    }
    peer.connector.reset();
    peer.hello_sent = false;
    peer.failure = "it refused our handshake: " + why;
    peers_cv_.notify_all();
    lock.unlock();
    release_held(from, false);
    return;
  }
  // kAuthConfirmType
  if (!peer.connector) {
    lock.unlock();
    return refuse(from, "a handshake confirmation nobody asked for");
  }
  const Status s = peer.connector->check(frame.body);
  peer.connector.reset();
  peer.hello_sent = false;  // our handshake is over
  if (s.ok()) {
    peer.authenticated = true;
    peer.incarnation = peer.challenge_incarnation;
  } else {
    peer.failure = s.message();
  }
  peers_cv_.notify_all();
  lock.unlock();
  release_held(from, s.ok());
  if (!s.ok()) refuse(from, s.message());
}

void Transport::release_held(HostId from, bool authenticated) {
  std::vector<std::vector<std::byte>> held;
  {
    std::lock_guard lock(mu_);
    held.swap(peers_[static_cast<size_t>(from)]->held);
  }
  if (held.empty()) return;
  if (!authenticated) {
    for (size_t i = 0; i < held.size(); ++i) {
      refuse(from, "a frame held while it authenticated, which it failed");
    }
    return;
  }
  for (const auto& frame : held) on_frame(from, frame);
}

// ---- sending

Status Transport::send(HostId host, std::string_view to, const Message& message) {
  if (host < 0 || static_cast<size_t>(host) >= options_.hosts.size()) {
    return Status::invalid_argument("transport: send to " + std::string(to) + ": no host " +
                                    std::to_string(host) + " in the hosts table");
  }
  const Payload& p = message.payload;
  if (p.size_bytes != p.bytes.size()) {
    return Status::invalid_argument("transport: send to " + std::string(to) + ": a payload of " +
                                    std::to_string(p.size_bytes) + " bytes holds " +
                                    std::to_string(p.bytes.size()) +
                                    " bytes of data; real mode sends the bytes themselves");
  }
  if (Status s = authenticate(host); !s.ok()) return s;
  uint64_t seq = 0;
  {
    std::lock_guard lock(mu_);
    seq = peers_[static_cast<size_t>(host)]->next_sequence++;
  }
  Envelope e;
  e.from = options_.host;
  e.to = std::string(to);
  e.body_type = body_type(message.body);
  e.header_bytes = message.header_bytes;
  const std::vector<std::byte> body = encode_body(message.body);
  const std::span<const std::byte> payload(p.bytes.data(), p.bytes.size());
  const size_t eager = kFrameHeaderBytes + 4 + 64 + e.to.size() + body.size() + payload.size();
  if (eager <= options_.eager_bytes) {
    Status s =
        post_frame(host, encode_frame(kEnvelopeType, seq, frame_body(e, false, body), payload));
    if (s.ok()) {
      std::lock_guard lock(mu_);
      ++stats_.sent;
    }
    return s;
  }
  // Bulk: the payload (and the body too, when it alone is too large to go inline) is pulled
  // by the receiver from registered memory.
  auto hold = std::make_unique<Op>(Op::Kind::kBulkHold);
  hold->peer = host;
  const bool body_inline =
      kFrameHeaderBytes + 128 + e.to.size() + body.size() <= options_.eager_bytes;
  if (body_inline) {
    hold->held = p.bytes;  // no copy: the payload's own memory
  } else {
    MutableBuffer region(body.size() + payload.size());
    region.write_at(0, body);
    region.write_at(body.size(), payload);
    hold->held = std::move(region).freeze();
    e.body_in_bulk = static_cast<uint32_t>(body.size());
  }
  const std::span<const std::byte> region(hold->held.data(), hold->held.size());
  Result<std::unique_ptr<Registration>> reg =
      register_memory(region.data(), region.size(), FI_REMOTE_READ);
  if (!reg.ok()) return reg.status();
  hold->remote = std::move(reg).value();
  e.bulk_bytes = region.size();
  e.bulk_crc = store::crc32c(region);
  e.bulk_address = hold->remote->address;
  e.bulk_key = hold->remote->key;
  {
    std::lock_guard lock(mu_);
    e.bulk_id = next_bulk_++;
    bulk_[e.bulk_id] = hold.get();
    outstanding_.insert(hold.get());
  }
  Op* held = hold.release();
  const std::vector<std::byte> fb =
      frame_body(e, true, body_inline ? body : std::vector<std::byte>{});
  Status s = post_frame(host, encode_frame(kBulkType, seq, fb, {}));
  std::lock_guard lock(mu_);
  if (!s.ok()) {
    bulk_.erase(e.bulk_id);
    outstanding_.erase(held);
    delete held;
    return s;
  }
  ++stats_.sent;
  ++stats_.bulk_sent;
  return s;
}

Status Transport::send_raw(HostId host, std::vector<std::byte> bytes) {
  if (host < 0 || static_cast<size_t>(host) >= options_.hosts.size()) {
    return Status::invalid_argument("transport: no host " + std::to_string(host));
  }
  return post_frame(host, std::move(bytes));
}

// ---- receiving

void Transport::progress_main() {
  t_progress_of = this;
  constexpr size_t kBatch = 16;
  fi_cq_msg_entry entries[kBatch];
  fi_addr_t sources[kBatch];
  int idle = 0;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
    }
    // Reads that found the queue full are retried here, between completions.
    for (size_t n = pending_reads_.size(); n > 0; --n) {
      Op* op = pending_reads_.front();
      pending_reads_.pop_front();
      post_read(op);
    }
    ssize_t n = fi_cq_readfrom(cq_, entries, kBatch, sources);
    if (n == -FI_EAGAIN && ++idle > 200) {
      // Idle: wait in the provider (which also progresses) for up to a millisecond.
      n = fi_cq_sreadfrom(cq_, entries, kBatch, sources, nullptr, 1);
      if (n == -FI_ETIMEDOUT) n = -FI_EAGAIN;
    }
    if (n > 0) {
      idle = 0;
      for (ssize_t i = 0; i < n; ++i) {
        auto* c = static_cast<Op::Context*>(entries[i].op_context);
        on_completion(c->op, sources[i], entries[i].len);
      }
    } else if (n == -FI_EAVAIL) {
      idle = 0;
      fi_cq_err_entry err{};
      if (fi_cq_readerr(cq_, &err, 0) == 1 && err.op_context != nullptr) {
        auto* c = static_cast<Op::Context*>(err.op_context);
        on_error(c->op, err.err, fi_cq_strerror(cq_, err.prov_errno, err.err_data, nullptr, 0));
      }
    } else if (n != -FI_EAGAIN) {
      log_(fabric_error("fi_cq_readfrom", static_cast<int>(n)));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

HostId Transport::host_of_address(uint64_t source) const {
  for (size_t i = 0; i < addresses_.size(); ++i) {
    if (addresses_[i] == source) return static_cast<HostId>(i);
  }
  return -1;
}

void Transport::on_completion(Op* op, uint64_t source, size_t length) {
  switch (op->kind) {
    case Op::Kind::kReceive: {
      const HostId from = source == FI_ADDR_NOTAVAIL ? -1 : host_of_address(source);
      if (from < 0) {
        refuse(-1, "the sender is not in the hosts table");
      } else {
        on_frame(from, std::span<const std::byte>(op->bytes.data(), length));
      }
      if (Status s = post_receive(op); !s.ok()) log_(s.message());
      return;
    }
    case Op::Kind::kSend: {
      std::lock_guard lock(mu_);
      outstanding_.erase(op);
      delete op;
      return;
    }
    case Op::Kind::kBulkRead:
      on_bulk_read(op);
      return;
    case Op::Kind::kBulkHold:
      return;  // never posted
  }
}

void Transport::on_error(Op* op, int err, const std::string& what) {
  switch (op->kind) {
    case Op::Kind::kReceive:
      // A datagram larger than the receive buffer (FI_ETRUNC), or a broken connection.
      refuse(-1, "a receive failed: " + what + " (" + fi_strerror(err) + ")");
      if (Status s = post_receive(op); !s.ok()) log_(s.message());
      return;
    case Op::Kind::kSend: {
      log_("a send to host " + std::to_string(op->peer) + " failed: " + what);
      lost_connection(op->peer);
      std::lock_guard lock(mu_);
      outstanding_.erase(op);
      delete op;
      return;
    }
    case Op::Kind::kBulkRead: {
      refuse(op->peer, "reading a bulk payload failed: " + what);
      WireWriter w;
      w.u64(op->envelope.bulk_id);
      (void)post_frame(op->peer, encode_frame(kBulkDoneType, 0, w.bytes(), {}));
      std::lock_guard lock(mu_);
      outstanding_.erase(op);
      delete op;
      return;
    }
    case Op::Kind::kBulkHold:
      return;
  }
}

void Transport::on_frame(HostId from, std::span<const std::byte> bytes) {
  Result<Frame> frame = decode_frame(bytes, options_.frame_limits);
  if (!frame.ok()) return refuse(from, frame.status().message());
  const uint16_t type = frame->header.type;
  if (is_auth(type)) return on_auth(from, *frame);
  bool start_handshake = false, held = false, authenticated = false;
  {
    std::lock_guard lock(mu_);
    Peer& peer = *peers_[static_cast<size_t>(from)];
    authenticated = peer.authenticated;
    if (!authenticated) {
      // A peer that believes the pair authenticated (one of us restarted): we authenticate it
      // again, and hold what it sends meanwhile (a few frames) until it has proved the key.
      start_handshake = !peer.hello_sent;
      if (start_handshake) {
        peer.hello_sent = true;
        peer.connector = std::make_unique<ConnectorHandshake>(
            options_.key, "host" + std::to_string(options_.host));
      }
      if (peer.held.size() < kHeldFrames) {
        peer.held.emplace_back(bytes.begin(), bytes.end());
        held = true;
      }
    }
  }
  if (start_handshake) (void)post_frame(from, encode_frame(kAuthHelloType, incarnation_, {}, {}));
  if (held) return;
  if (!authenticated) {
    return refuse(from, "a " + body_type_name(type) + " frame before the peer authenticated (" +
                            std::to_string(kHeldFrames) + " held already)");
  }
  if (type == kEnvelopeType || type == kBulkType) return on_message(from, *frame);
  if (type == kBulkDoneType) {
    WireReader r(frame->body);
    uint64_t id = 0;
    r.u64("bulk_done.id", &id);
    if (Status s = r.finish(); !s.ok()) return refuse(from, s.message());
    std::lock_guard lock(mu_);
    auto it = bulk_.find(id);
    if (it == bulk_.end() || it->second->peer != from) {
      ++stats_.refused;
      return;
    }
    outstanding_.erase(it->second);
    delete it->second;
    bulk_.erase(it);
    return;
  }
  refuse(from, "a frame of unknown type " + std::to_string(type));
}

void Transport::on_message(HostId from, const Frame& frame) {
  const bool bulk = frame.header.type == kBulkType;
  auto parsed = parse_envelope(frame.body, bulk, options_.codec_limits.wire);
  if (!parsed.ok()) return refuse(from, parsed.status().message());
  Envelope& e = parsed->first;
  if (e.from != from) {
    return refuse(from, "an envelope from host " + std::to_string(e.from) +
                            " arriving from the address of host " + std::to_string(from));
  }
  if (!bulk) {
    Result<MessageBody> body = decode_body(e.body_type, parsed->second, options_.codec_limits);
    if (!body.ok()) return refuse(from, body.status().message());
    Message m;
    m.body = std::move(body).value();
    m.payload = Payload::of(Buffer::copy_of(frame.payload));
    m.header_bytes = e.header_bytes;
    {
      std::lock_guard lock(mu_);
      ++stats_.delivered;
    }
    deliver_(from, std::move(e.to), std::move(m));
    return;
  }
  const uint64_t limit =
      options_.frame_limits.max_payload_bytes + options_.frame_limits.max_body_bytes;
  if (e.bulk_bytes > limit || e.body_in_bulk > e.bulk_bytes ||
      e.body_in_bulk > options_.frame_limits.max_body_bytes) {
    return refuse(from, "a bulk region of " + std::to_string(e.bulk_bytes) + " bytes (body " +
                            std::to_string(e.body_in_bulk) + "), more than the limit of " +
                            std::to_string(limit));
  }
  auto op = std::make_unique<Op>(Op::Kind::kBulkRead);
  op->peer = from;
  op->inline_body.assign(parsed->second.begin(), parsed->second.end());
  op->envelope = std::move(e);
  op->into = options_.pool->take(op->envelope.bulk_bytes, /*zeroed=*/false);  // read over
  if (mr_mode_ & FI_MR_LOCAL) {
    Result<std::unique_ptr<Registration>> r =
        register_memory(op->into.data(), op->into.size(), FI_READ);
    if (!r.ok()) return refuse(from, r.status().message());
    op->local = std::move(r).value();
  }
  Op* raw = op.release();
  {
    std::lock_guard lock(mu_);
    outstanding_.insert(raw);
  }
  post_read(raw);
}

void Transport::post_read(Op* op) {
  const ssize_t ret =
      fi_read(ep_, op->into.data(), op->into.size(), op->local ? op->local->desc : nullptr,
              addresses_[static_cast<size_t>(op->peer)], op->envelope.bulk_address,
              op->envelope.bulk_key, op->ctx());
  if (ret == 0) return;
  if (ret == -FI_EAGAIN) {
    pending_reads_.push_back(op);
    return;
  }
  on_error(op, static_cast<int>(-ret), fabric_error("fi_read", static_cast<int>(ret)));
}

void Transport::on_bulk_read(Op* op) {
  std::unique_ptr<Op> owned(op);
  {
    std::lock_guard lock(mu_);
    outstanding_.erase(op);
  }
  const Envelope& e = op->envelope;
  WireWriter done;
  done.u64(e.bulk_id);
  (void)post_frame(op->peer, encode_frame(kBulkDoneType, 0, done.bytes(), {}));
  const Buffer region = std::move(op->into).freeze();
  if (store::crc32c(std::span<const std::byte>(region.data(), region.size())) != e.bulk_crc) {
    return refuse(op->peer, "a bulk payload whose crc32c does not match its envelope");
  }
  const std::span<const std::byte> body =
      e.body_in_bulk > 0 ? std::span<const std::byte>(region.data(), e.body_in_bulk)
                         : std::span<const std::byte>(op->inline_body);
  Result<MessageBody> decoded = decode_body(e.body_type, body, options_.codec_limits);
  if (!decoded.ok()) return refuse(op->peer, decoded.status().message());
  Message m;
  m.body = std::move(decoded).value();
  m.payload = Payload::of(region.slice(e.body_in_bulk, region.size() - e.body_in_bulk));
  m.header_bytes = e.header_bytes;
  {
    std::lock_guard lock(mu_);
    ++stats_.delivered;
    ++stats_.bulk_received;
  }
  deliver_(op->peer, op->envelope.to, std::move(m));
}

}  // namespace granary::realmode
