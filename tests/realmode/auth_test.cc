// Cluster authentication: both ends with the key agree; a wrong key is refused at either end; a
// response recorded on one connection is refused on another; out-of-order, malformed and
// oversized handshake bodies are refused; key files that others may read are refused.
#include "realmode/auth.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>

namespace granary::realmode {
namespace {

std::string make_temp_dir() {
  char dir[] = "/tmp/granary-auth-XXXXXX";
  return mkdtemp(dir) ? std::string(dir) : std::string("/tmp");
}

ClusterKey key() {
  Result<ClusterKey> k = ClusterKey::generate();
  EXPECT_TRUE(k.ok());
  return *k;
}

TEST(Auth, BothEndsWithTheKeyAgree) {
  const ClusterKey k = key();
  AcceptorHandshake server(k);
  ConnectorHandshake client(k, "client.3");
  auto challenge = server.challenge();
  ASSERT_TRUE(challenge.ok());
  EXPECT_EQ(challenge->size(), kNonceBytes);
  auto response = client.respond(*challenge);
  ASSERT_TRUE(response.ok()) << response.status().message();
  auto name = server.verify(*response);
  ASSERT_TRUE(name.ok()) << name.status().message();
  EXPECT_EQ(*name, "client.3");
  auto confirm = server.confirm();
  ASSERT_TRUE(confirm.ok());
  EXPECT_TRUE(client.check(*confirm).ok());
}

TEST(Auth, AWrongKeyIsRefusedAtEitherEnd) {
  const ClusterKey ours = key(), theirs = key();
  {
    AcceptorHandshake server(ours);
    ConnectorHandshake intruder(theirs, "client.9");
    auto response = intruder.respond(*server.challenge());
    ASSERT_TRUE(response.ok());
    auto name = server.verify(*response);
    ASSERT_FALSE(name.ok());
    EXPECT_EQ(name.status().code(), Status::Code::kPermissionDenied);
    EXPECT_EQ(name.status().message(),
              "authentication failed: 'client.9' does not hold the cluster key");
    EXPECT_FALSE(server.confirm().ok());  // nothing to confirm
  }
  {
    // An impostor daemon: it cannot check the response, and its confirmation fails.
    AcceptorHandshake impostor(theirs);
    ConnectorHandshake client(ours, "client.1");
    auto response = client.respond(*impostor.challenge());
    ASSERT_TRUE(response.ok());
    EXPECT_FALSE(impostor.verify(*response).ok());
    AcceptorHandshake other(theirs);
    ConnectorHandshake helper(theirs, "client.1");
    ASSERT_TRUE(other.verify(*helper.respond(*other.challenge())).ok());
    const Status s = client.check(*other.confirm());
    EXPECT_EQ(s.code(), Status::Code::kPermissionDenied);
    EXPECT_EQ(s.message(), "authentication failed: the acceptor does not hold the cluster key");
  }
}

TEST(Auth, AResponseRecordedOnOneConnectionIsRefusedOnAnother) {
  const ClusterKey k = key();
  AcceptorHandshake first(k);
  ConnectorHandshake client(k, "osd.4");
  auto recorded = client.respond(*first.challenge());
  ASSERT_TRUE(recorded.ok());
  AcceptorHandshake second(k);
  ASSERT_TRUE(second.challenge().ok());  // a fresh nonce
  EXPECT_FALSE(second.verify(*recorded).ok());
  // The name is covered by the MAC: changing it in transit is refused.
  AcceptorHandshake third(k);
  ConnectorHandshake osd(k, "osd.4");
  std::vector<std::byte> changed = *osd.respond(*third.challenge());
  changed[4] = std::byte{'x'};  // "xsd.4"
  EXPECT_FALSE(third.verify(changed).ok());
}

TEST(Auth, OutOfOrderAndMalformedBodiesAreRefused) {
  const ClusterKey k = key();
  AcceptorHandshake server(k);
  EXPECT_EQ(server.verify({}).status().message(),
            "authentication failed: a response without a challenge, or a second one");
  EXPECT_FALSE(server.challenge().ok());  // failed handshakes stay failed
  ConnectorHandshake client(k, "client.0");
  EXPECT_FALSE(client.check({}).ok());
  std::vector<std::byte> short_challenge(kNonceBytes - 1);
  EXPECT_EQ(client.respond(short_challenge).status().message(),
            "authentication failed: AuthChallenge.nonce: truncated: expected 1 bytes at offset 31, "
            "found 0");
  AcceptorHandshake s2(k);
  auto challenge = s2.challenge();
  ConnectorHandshake c2(k, "client.0");
  std::vector<std::byte> response = *c2.respond(*challenge);
  response.push_back(std::byte{0});
  EXPECT_EQ(s2.verify(response).status().message(),
            "authentication failed: body: 1 bytes after the last field (another layout?)");
  // A name over the limit is refused before it is read.
  AcceptorHandshake s3(k);
  ConnectorHandshake long_name(k, std::string(kMaxPeerNameBytes + 1, 'n'));
  EXPECT_EQ(long_name.respond(*s3.challenge()).status().code(), Status::Code::kInvalidArgument);
  // Random bodies never verify.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200; ++i) {
    AcceptorHandshake s(k);
    ASSERT_TRUE(s.challenge().ok());
    std::vector<std::byte> junk(rng() % 400);
    for (std::byte& b : junk) b = static_cast<std::byte>(rng() & 0xFF);
    EXPECT_FALSE(s.verify(junk).ok());
  }
}

TEST(Auth, KeyFilesAreOwnerOnly) {
  const std::string dir = make_temp_dir();
  const std::string path = dir + "/cluster.key";
  const ClusterKey k = key();
  ASSERT_TRUE(k.save(path).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto loaded = ClusterKey::load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->hex(), k.hex());
  EXPECT_EQ(k.save(path).message(), path + ": exists; a cluster key is never overwritten");
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  EXPECT_EQ(ClusterKey::load(path).status().message(),
            path +
                ": the cluster key file may be read by other users (mode 0644); expected mode "
                "0600 or stricter: chmod 600 " +
                path);
  const std::string bad = dir + "/bad.key";
  { std::ofstream(bad) << "not a key\n"; }
  ASSERT_EQ(::chmod(bad.c_str(), 0600), 0);
  EXPECT_EQ(ClusterKey::load(bad).status().message(),
            bad + ": cluster key: expected 64 hex digits, found 9 characters");
  EXPECT_EQ(ClusterKey::load(dir + "/none.key").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(ClusterKey::from_hex(std::string(63, 'a') + "g").status().message(),
            "cluster key: expected hex digits, found a character 103 at position 63");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace granary::realmode
