// The transport's ping-pong (realmode/transport.h), as libfabric's fi_pingpong measures its own:
// two hosts on loopback (two Transports of one process, tcp;ofi_rxm), host 0 sends a message
// with a payload of SIZE bytes to host 1, whose echo task sends the same back; ITERS round
// trips after a warm-up. Prints "SIZE ITERS usec/xfer MB/s" where usec/xfer is half a round
// trip and MB/s = SIZE / usec/xfer (fi_pingpong's definitions). Messages above the transport's
// eager size travel by RMA read (bulk), the others inline.
// Usage: transport_bench SIZE ITERS [PROVIDER]
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "realmode/transport.h"
#include "tests/realmode/loopback.h"

using namespace granary;
using namespace granary::realmode;

namespace {

// What a host's deliver callback received, for a task of its own to take.
class Inbox {
 public:
  void put(Message m) {
    std::lock_guard lock(mu_);
    q_.push_back(std::move(m));
    cv_.notify_one();
  }
  Message take() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !q_.empty(); });
    Message m = std::move(q_.front());
    q_.pop_front();
    return m;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Message> q_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: transport_bench SIZE ITERS [PROVIDER]\n");
    return 2;
  }
  const size_t size = std::strtoull(argv[1], nullptr, 10);
  const int iters = std::atoi(argv[2]);
  auto key = ClusterKey::generate();
  if (!key.ok()) return 1;
  const auto table = test::loopback_table(2);
  Inbox inbox[2];
  std::unique_ptr<Transport> t[2];
  for (int h = 0; h < 2; ++h) {
    TransportOptions o;
    o.host = h;
    o.hosts = table;
    o.key = *key;
    if (argc > 3) o.provider = argv[3];
    auto opened = Transport::open(
        o, [&inbox, h](HostId, std::string, Message m) { inbox[h].put(std::move(m)); }, nullptr);
    if (!opened.ok()) {
      std::fprintf(stderr, "transport_bench: %s\n", opened.status().to_string().c_str());
      return 1;
    }
    t[h] = std::move(opened).value();
  }
  MutableBuffer b(size);
  for (size_t i = 0; i < size; ++i) b.data()[i] = static_cast<std::byte>(i * 7);
  Message ping;
  ping.body = Heartbeat{0, 0};
  ping.payload = Payload::of(std::move(b).freeze());
  const int warmup = iters / 10 + 1;
  std::thread echo([&] {
    for (int i = 0; i < warmup + iters; ++i) {
      Message m = inbox[1].take();
      if (!t[1]->send(0, "ping", m).ok()) std::abort();
    }
  });
  auto round_trip = [&] {
    if (!t[0]->send(1, "pong", ping).ok()) std::abort();
    (void)inbox[0].take();
  };
  for (int i = 0; i < warmup; ++i) round_trip();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) round_trip();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  echo.join();
  const double usec = s / iters / 2 * 1e6;
  std::printf("%zu %d %.2f %.2f\n", size, iters, usec, static_cast<double>(size) / usec);
  return 0;
}
