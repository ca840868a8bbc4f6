// Cluster authentication (auth.h).
#include "realmode/auth.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "realmode/wire.h"

namespace granary::realmode {

namespace {

constexpr const char* kConnectorLabel = "granary-auth-1 connector";
constexpr const char* kAcceptorLabel = "granary-auth-1 acceptor";

using Nonce = std::array<uint8_t, kNonceBytes>;
using Mac = std::array<uint8_t, kMacBytes>;

Status fresh_nonce(Nonce* n) {
  if (RAND_bytes(n->data(), static_cast<int>(n->size())) != 1) {
    return Status::io_error("authentication: the random number generator failed");
  }
  return Status();
}

// HMAC-SHA256(key, label | a | b | name).
Mac mac_of(const ClusterKey& key, const char* label, const Nonce& a, const Nonce& b,
           const std::string& name) {
  std::string message(label);
  message.append(reinterpret_cast<const char*>(a.data()), a.size());
  message.append(reinterpret_cast<const char*>(b.data()), b.size());
  message += name;
  Mac mac{};
  unsigned int n = 0;
  const std::span<const uint8_t> k = key.bytes();
  HMAC(EVP_sha256(), k.data(), static_cast<int>(k.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac.data(), &n);
  GRANARY_CHECK(n == kMacBytes);
  return mac;
}

void put(WireWriter& w, std::span<const uint8_t> bytes) {
  for (uint8_t b : bytes) w.u8(b);
}

template <size_t N>
bool get(WireReader& r, const char* field, std::array<uint8_t, N>* out) {
  for (uint8_t& b : *out) {
    if (!r.u8(field, &b)) return false;
  }
  return true;
}

std::vector<std::byte> nonce_body(const Nonce& n) {
  WireWriter w;
  put(w, n);
  return w.take();
}

Status denied(const std::string& why) {
  return Status::permission_denied("authentication failed: " + why);
}

}  // namespace

Result<ClusterKey> ClusterKey::generate() {
  ClusterKey k;
  if (RAND_bytes(k.bytes_.data(), static_cast<int>(k.bytes_.size())) != 1) {
    return Status::io_error("cluster key: the random number generator failed");
  }
  return k;
}

Result<ClusterKey> ClusterKey::from_hex(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (text.size() != 2 * kBytes) {
    return Status::invalid_argument("cluster key: expected " + std::to_string(2 * kBytes) +
                                    " hex digits, found " + std::to_string(text.size()) +
                                    " characters");
  }
  ClusterKey k;
  for (size_t i = 0; i < kBytes; ++i) {
    unsigned v = 0;
    for (size_t at = 2 * i; at < 2 * i + 2; ++at) {
      const char c = text[at];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) {
        return Status::invalid_argument("cluster key: expected hex digits, found a character " +
                                        std::to_string(static_cast<unsigned char>(c)) +
                                        " at position " + std::to_string(at));
      }
      v = v * 16 + static_cast<unsigned>(d);
    }
    k.bytes_[i] = static_cast<uint8_t>(v);
  }
  return k;
}

Result<ClusterKey> ClusterKey::load(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::not_found(path + ": no cluster key file");
    return Status::io_error(path + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return Status::invalid_argument(path + ": not a regular file");
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Status::invalid_argument(path +
                                    ": the cluster key file may be read by other users (mode " +
                                    mode + "); expected mode 0600 or stricter: chmod 600 " + path);
  }
  if (st.st_size > 1024) {
    return Status::invalid_argument(path +
                                    ": expected a cluster key file of 64 hex digits, found " +
                                    std::to_string(st.st_size) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return Status::io_error(path + ": cannot read the cluster key file");
  Result<ClusterKey> k = from_hex(text.str());
  if (!k.ok()) return Status::invalid_argument(path + ": " + k.status().message());
  return k;
}

Status ClusterKey::save(const std::string& path) const {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) {
      return Status::invalid_argument(path + ": exists; a cluster key is never overwritten");
    }
    return Status::io_error(path + ": " + std::strerror(errno));
  }
  const std::string text = hex() + "\n";
  const ssize_t n = ::write(fd, text.data(), text.size());
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size()) || !synced) {
    return Status::io_error(path + ": cannot write the cluster key");
  }
  return Status();
}

std::string ClusterKey::hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes_) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

Result<std::vector<std::byte>> AcceptorHandshake::challenge() {
  if (state_ != State::kStart) {
    state_ = State::kFailed;
    return denied("a second challenge on one connection");
  }
  if (Status s = fresh_nonce(&server_nonce_); !s.ok()) return s;
  state_ = State::kChallenged;
  return nonce_body(server_nonce_);
}

Result<std::string> AcceptorHandshake::verify(std::span<const std::byte> response) {
  if (state_ != State::kChallenged) {
    state_ = State::kFailed;
    return denied("a response without a challenge, or a second one");
  }
  state_ = State::kFailed;  // until it checks
  WireReader::Limits limits;
  limits.max_string_bytes = kMaxPeerNameBytes;
  WireReader r(response, limits);
  std::string name;
  Mac mac{};
  r.string("AuthResponse.name", &name);
  get(r, "AuthResponse.nonce", &client_nonce_);
  get(r, "AuthResponse.mac", &mac);
  if (Status s = r.finish(); !s.ok()) return denied(s.message());
  const Mac expected = mac_of(key_, kConnectorLabel, server_nonce_, client_nonce_, name);
  if (CRYPTO_memcmp(mac.data(), expected.data(), kMacBytes) != 0) {
    return denied("'" + name.substr(0, 64) + "' does not hold the cluster key");
  }
  name_ = name;
  state_ = State::kVerified;
  return name;
}

Result<std::vector<std::byte>> AcceptorHandshake::confirm() const {
  if (state_ != State::kVerified) return denied("no verified response to confirm");
  WireWriter w;
  put(w, mac_of(key_, kAcceptorLabel, client_nonce_, server_nonce_, name_));
  return w.take();
}

Result<std::vector<std::byte>> ConnectorHandshake::respond(std::span<const std::byte> challenge) {
  if (responded_) return denied("a second challenge on one connection");
  if (name_.empty() || name_.size() > kMaxPeerNameBytes) {
    return Status::invalid_argument("authentication: a peer name of 1.." +
                                    std::to_string(kMaxPeerNameBytes) + " bytes, found " +
                                    std::to_string(name_.size()));
  }
  WireReader r(challenge);
  get(r, "AuthChallenge.nonce", &server_nonce_);
  if (Status s = r.finish(); !s.ok()) return denied(s.message());
  if (Status s = fresh_nonce(&client_nonce_); !s.ok()) return s;
  responded_ = true;
  WireWriter w;
  w.string(name_);
  put(w, client_nonce_);
  put(w, mac_of(key_, kConnectorLabel, server_nonce_, client_nonce_, name_));
  return w.take();
}

Status ConnectorHandshake::check(std::span<const std::byte> confirm) {
  if (!responded_) return denied("a confirmation before any response");
  WireReader r(confirm);
  Mac mac{};
  get(r, "AuthConfirm.mac", &mac);
  if (Status s = r.finish(); !s.ok()) return denied(s.message());
  const Mac expected = mac_of(key_, kAcceptorLabel, client_nonce_, server_nonce_, name_);
  if (CRYPTO_memcmp(mac.data(), expected.data(), kMacBytes) != 0) {
    return denied("the acceptor does not hold the cluster key");
  }
  return Status();
}

}  // namespace granary::realmode
