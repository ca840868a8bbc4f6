// Cluster authentication (issue 13): before a daemon accepts any message on a connection, both
// ends prove they hold the cluster key, by challenge and response over HMAC-SHA256 (OpenSSL's
// libcrypto), as Ceph's cephx proves a shared secret without sending it:
//
//   acceptor  -> connector  Challenge: 32 random bytes (server nonce)
//   connector -> acceptor   Response: its name, 32 random bytes (client nonce), and
//                           HMAC(key, "granary-auth-1 connector" | server nonce | client nonce |
//                           name)
//   acceptor  -> connector  Confirm: HMAC(key, "granary-auth-1 acceptor" | client nonce |
//                           server nonce | name)
//
// The acceptor's fresh nonce makes a recorded response useless on another connection; the
// connector's nonce and the Confirm prove the acceptor holds the key too (a connector never
// talks to an impostor). MACs are compared in constant time (CRYPTO_memcmp). The handshake
// messages travel as frames (frame.h) of the types below, their bodies written with wire.h.
//
// The key lives in a file of 64 hex digits readable by its owner only (like an ssh private key):
// a file other users may read is refused. Nonces come from OpenSSL's RAND_bytes (the kernel's
// generator).
//
// Thread-safety: a handshake object belongs to one connection and one thread; ClusterKey is a
// value.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/status.h"

namespace granary::realmode {

// Frame types of the handshake, apart from the message bodies' 0..kBodyTypes-1.
inline constexpr uint16_t kAuthChallengeType = 0xA001;
inline constexpr uint16_t kAuthResponseType = 0xA002;
inline constexpr uint16_t kAuthConfirmType = 0xA003;
inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kMacBytes = 32;  // HMAC-SHA256
inline constexpr size_t kMaxPeerNameBytes = 256;

class ClusterKey {
 public:
  static constexpr size_t kBytes = 32;
  // A new random key.
  static Result<ClusterKey> generate();
  // From 64 hex digits (an optional trailing newline): InvalidArgument naming what was found.
  static Result<ClusterKey> from_hex(std::string_view text);
  // The key file at `path`: NotFound, IOError, or InvalidArgument for a file that group or
  // others may read ("PATH: the cluster key file may be read by other users (mode 0644);
  // expected mode 0600 or stricter: chmod 600 PATH") or that holds no key.
  static Result<ClusterKey> load(const std::string& path);
  // Writes the key to a new file of mode 0600 (InvalidArgument when the file exists: a key is
  // never overwritten).
  Status save(const std::string& path) const;

  std::string hex() const;
  std::span<const uint8_t> bytes() const { return bytes_; }

 private:
  std::array<uint8_t, kBytes> bytes_{};
};

// The accepting end (a daemon).
class AcceptorHandshake {
 public:
  explicit AcceptorHandshake(const ClusterKey& key) : key_(key) {}
  // The Challenge body (a fresh nonce each call; call once per connection).
  Result<std::vector<std::byte>> challenge();
  // Checks a Response body against the last challenge: the connector's name, or
  // PermissionDenied "authentication failed: ..." (a wrong key, a response to another
  // challenge, a malformed body, a response before a challenge or a second one). After a
  // failure every later call fails: the connection is to be closed.
  Result<std::string> verify(std::span<const std::byte> response);
  // The Confirm body, once verify() succeeded.
  Result<std::vector<std::byte>> confirm() const;

 private:
  const ClusterKey& key_;
  std::array<uint8_t, kNonceBytes> server_nonce_{}, client_nonce_{};
  std::string name_;
  enum class State { kStart, kChallenged, kVerified, kFailed } state_ = State::kStart;
};

// The connecting end (a client or a daemon dialling another).
class ConnectorHandshake {
 public:
  // `name` says who connects ("client.3", "osd.7"), at most kMaxPeerNameBytes.
  ConnectorHandshake(const ClusterKey& key, std::string name) : key_(key), name_(std::move(name)) {}
  // The Response body to a Challenge body.
  Result<std::vector<std::byte>> respond(std::span<const std::byte> challenge);
  // Checks the acceptor's Confirm: OK, or PermissionDenied "authentication failed: ..." (the
  // acceptor lacks the key, a malformed body, no response sent yet).
  Status check(std::span<const std::byte> confirm);

 private:
  const ClusterKey& key_;
  std::string name_;
  std::array<uint8_t, kNonceBytes> server_nonce_{}, client_nonce_{};
  bool responded_ = false;
};

}  // namespace granary::realmode
