// The body codec: every message type round-trips field for field (a sample of each with
// non-default values), maps come back as maps that place the same way, whole messages travel
// in one frame with their payload, and every truncation and byte change of every sample is
// refused or decoded without a crash (ASan and UBSan in `make sanitize`), with errors that name
// the type and field.
#include "realmode/codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "engine/cluster/osd_map.h"
#include "engine/crush/text_format.h"
#include "tests/engine/cluster/cluster_fixture.h"

namespace granary::realmode {
namespace {

std::shared_ptr<const cluster::OsdMap> sample_map() {
  cluster::OsdMap map = cluster::test::make_map(4, 3, 64);
  cluster::Incremental inc;
  inc.mark_down = {2};
  inc.mark_out = {2, 5};
  inc.reweight = {{7, 0x8000}};
  inc.pg_temp = {{cluster::test::kReplicatedPool, 3, false, {4, 1, 0}},
                 {cluster::test::kErasurePool, 9, false, {}}};
  EXPECT_TRUE(map.apply(inc).ok());
  return std::make_shared<const cluster::OsdMap>(std::move(map));
}

// One body of each type, every field away from its default.
std::vector<MessageBody> samples() {
  ReadRequest read{
      7, "rbd_data.1.0000", 4096, 8192, "client.3", 1.5, {4, 2, 65536}, {"osd.1", "", "osd.4"}, 5};
  ReadReply read_reply{7, false, "no such object", ReplyError::kNotFound, 0, 1.5, 9};
  MetadataRequest meta{8, MetadataOp::kClose, "/data/file-01.npz", 1234, "client.3", 2.5};
  MetadataReply meta_reply{8, true, "", ReplyError::kNone, 1234, 2.5, 65536, {3, 0, 7}};
  WriteRequest write;
  write.request_id = 9;
  write.object = "ckpt.0007";
  write.offset = 1 << 20;
  write.length = 4096;
  write.reply_to = "client.0";
  write.sent_at_s = 3.25;
  write.replicas = {"osd.2", "osd.5"};
  write.ec = {0, 0, 4096};
  write.logical_end_bytes = (1 << 20) + 4096;
  write.durable = false;
  write.interval = 11;
  write.recovery_push = true;
  write.version = 42;
  write.shard = 3;
  WriteReply write_reply{9, false, "disk full", ReplyError::kInvalid, 0, 3.25};
  CommitRequest commit{10, "ckpt.0007", "client.0", 4.0};
  ScanRequest scan{11, 17, true, "osd.3", 9};
  ScanReply scan_reply{11, true, "", {{"a", {10, 40, 2, 4}}, {"b", {0, 0, 0, -1}}}};
  RemoveRequest remove{12, "a", "osd.1"};
  Heartbeat beat{5, 6.5, 0x0123456789abcdefULL};
  RecoveryPush push{13, 21, 3, 8192, 4096, "recovery.1"};
  RecoveryPushReply push_reply{13, false, "io error", 0};
  RecoveryRead rread{14, 0, 65536, "recovery.2"};
  RecoveryReadReply rread_reply{14, true, "", 65536};
  ReserveRequest reserve{15, ReserveOp::kRelease, -3, "op.15", "reserver.0"};
  ReserveGrant grant{15};
  MapSubscribe subscribe{"osd.4", 12, true};
  MapUpdate update;
  update.first_epoch = 3;
  auto inc = std::make_shared<cluster::Incremental>();
  inc->new_crush = cluster::test::make_crush(4, 3);
  inc->new_max_osd = 12;
  inc->remove = {11};
  inc->mark_up = {2};
  inc->mark_in = {5};
  inc->pg_temp = {{1, 4, true, {}}};
  update.incrementals = {inc, std::make_shared<cluster::Incremental>()};
  update.full = sample_map();
  PgTempRequest pg_temp{"recovery-manager", {{1, 2, false, {3, 4}}, {2, 0, true, {}}}};
  OsdDeviceReport device{6, DeviceEvent::kReplacedEmpty};
  std::vector<MessageBody> all = {read,      read_reply, meta,    meta_reply,  write,   write_reply,
                                  commit,    Shutdown{}, scan,    scan_reply,  remove,  beat,
                                  push,      push_reply, rread,   rread_reply, reserve, grant,
                                  subscribe, update,     pg_temp, device};
  return all;
}

TEST(Codec, EveryTypeHasASampleInTypeOrder) {
  const auto all = samples();
  ASSERT_EQ(all.size(), kBodyTypes);
  std::set<std::string> names;
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(body_type(all[i]), i);
    EXPECT_TRUE(names.insert(body_type_name(static_cast<uint16_t>(i))).second);
  }
  EXPECT_EQ(body_type_name(0), "ReadRequest");
  EXPECT_EQ(body_type_name(19), "MapUpdate");
  EXPECT_EQ(body_type_name(kBodyTypes), "type 22");
}

// Decoding gives back the same fields: re-encoding the decoded body gives the same bytes, and a
// few fields of each kind are checked by value.
TEST(Codec, EveryTypeRoundTrips) {
  for (const MessageBody& body : samples()) {
    SCOPED_TRACE(body_type_name(body_type(body)));
    const std::vector<std::byte> bytes = encode_body(body);
    Result<MessageBody> back = decode_body(body_type(body), bytes);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->index(), body.index());
    EXPECT_EQ(encode_body(*back), bytes);
  }
  const auto all = samples();
  const auto read = std::get<ReadRequest>(*decode_body(0, encode_body(all[0])));
  EXPECT_EQ(read.object, "rbd_data.1.0000");
  EXPECT_EQ(read.ec.k, 4);
  EXPECT_EQ(read.shards, (std::vector<std::string>{"osd.1", "", "osd.4"}));
  EXPECT_EQ(read.sent_at_s, 1.5);
  EXPECT_EQ(read.shard, 5);
  const auto reply = std::get<ReadReply>(*decode_body(1, encode_body(all[1])));
  EXPECT_EQ(reply.error_code, ReplyError::kNotFound);
  EXPECT_FALSE(reply.ok);
  const auto meta = std::get<MetadataRequest>(*decode_body(2, encode_body(all[2])));
  EXPECT_EQ(meta.op, MetadataOp::kClose);
  EXPECT_EQ(meta.size_bytes, 1234);
  const auto scan = std::get<ScanReply>(*decode_body(9, encode_body(all[9])));
  ASSERT_EQ(scan.objects.size(), 2u);
  EXPECT_EQ(scan.objects[0].info.logical_bytes, 40u);
  EXPECT_EQ(scan.objects[0].info.shard, 4);
  EXPECT_EQ(scan.objects[1].info.shard, -1);
  const auto reserve = std::get<ReserveRequest>(*decode_body(16, encode_body(all[16])));
  EXPECT_EQ(reserve.priority, -3);
  EXPECT_EQ(reserve.op, ReserveOp::kRelease);
}

// A map travels as a map: the decoded full map has the same epoch, states, pools and pg_temps
// and places every PG of both pools where the original does; the incremental's CRUSH map
// decodes to the same text.
TEST(Codec, MapsComeBackPlacingTheSameWay) {
  const MapUpdate sent = std::get<MapUpdate>(samples()[19]);
  Result<MessageBody> back = decode_body(19, encode_body(sent));
  ASSERT_TRUE(back.ok()) << back.status().message();
  const MapUpdate& got = std::get<MapUpdate>(*back);
  ASSERT_NE(got.full, nullptr);
  EXPECT_EQ(got.full->epoch(), sent.full->epoch());
  EXPECT_FALSE(got.full->is_up(2));
  EXPECT_FALSE(got.full->is_in(5));
  EXPECT_EQ(got.full->reweight(7), 0x8000u);
  EXPECT_EQ(got.full->pg_temps(), sent.full->pg_temps());
  for (int64_t pool : {cluster::test::kReplicatedPool, cluster::test::kErasurePool}) {
    EXPECT_EQ(*got.full->acting_sets(pool), *sent.full->acting_sets(pool)) << "pool " << pool;
  }
  ASSERT_EQ(got.incrementals.size(), 2u);
  const cluster::Incremental& inc = *got.incrementals[0];
  ASSERT_NE(inc.new_crush, nullptr);
  EXPECT_EQ(crush::write_text_map(*inc.new_crush),
            crush::write_text_map(*sent.incrementals[0]->new_crush));
  EXPECT_EQ(inc.remove, std::vector<int32_t>{11});
  EXPECT_EQ(inc.pg_temp, sent.incrementals[0]->pg_temp);
  EXPECT_TRUE(got.incrementals[1]->empty());
}

TEST(Codec, AMessageTravelsInOneFrameWithItsPayload) {
  Message m;
  m.body = samples()[4];  // a WriteRequest
  m.payload = Payload::of(Buffer::copy_of(std::string_view("the bytes of the write")));
  Result<std::vector<std::byte>> frame = encode_message(m, 77);
  ASSERT_TRUE(frame.ok()) << frame.status().message();
  Result<Frame> f = decode_frame(*frame);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->header.sequence, 77u);
  EXPECT_EQ(f->header.type, 4);
  Result<Message> back = decode_message(*f);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(std::get<WriteRequest>(back->body).version, 42u);
  EXPECT_EQ(std::get<WriteRequest>(back->body).shard, 3);
  ASSERT_EQ(back->payload.size_bytes, 22u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(back->payload.bytes.data()), 22),
            "the bytes of the write");
  EXPECT_EQ(back->header_bytes, f->body.size());
  // The simulator's size-only payloads have no bytes to send.
  m.payload = Payload::of_size(4096);
  EXPECT_EQ(encode_message(m, 78).status().message(),
            "WriteRequest: a payload of 4096 bytes holds 0 bytes of data; real mode sends the "
            "bytes themselves");
}

std::string decode_error(uint16_t type, std::vector<std::byte> bytes,
                         const CodecLimits& limits = {}) {
  Result<MessageBody> r = decode_body(type, bytes, limits);
  return r.ok() ? std::string("(decoded)") : r.status().message();
}

TEST(Codec, ErrorsNameTheTypeAndTheField) {
  EXPECT_EQ(decode_error(22, {}), "body type 22: unknown (this granary knows 0..21)");
  ReadRequest long_name;
  long_name.object = std::string(5000, 'x');
  EXPECT_EQ(decode_error(0, encode_body(long_name)),
            "ReadRequest.object: a string of 5000 bytes, more than the limit of 4096");
  std::vector<std::byte> meta = encode_body(MetadataRequest{});
  meta[8] = std::byte{9};  // the op, after the u64 request id
  EXPECT_EQ(decode_error(2, meta), "MetadataRequest.op: expected a value 0..3, found 9");
  std::vector<std::byte> beat = encode_body(Heartbeat{});
  beat.push_back(std::byte{0});
  EXPECT_EQ(decode_error(11, beat),
            "Heartbeat.body: 1 bytes after the last field (another layout?)");
  EXPECT_EQ(decode_error(11, {}),
            "Heartbeat.osd: truncated: expected 4 bytes at offset 0, found 0");
  ScanReply scan{1, true, "", {{"a", {}}, {std::string(5000, 'y'), {}}}};
  EXPECT_EQ(decode_error(9, encode_body(scan)),
            "ScanReply.objects[1].name: a string of 5000 bytes, more than the limit of 4096");
  // A CRUSH map that does not parse, and a full map that does not check.
  MapUpdate update = std::get<MapUpdate>(samples()[19]);
  update.full = nullptr;
  std::vector<std::byte> bytes = encode_body(update);
  const std::string text = crush::write_text_map(*update.incrementals[0]->new_crush);
  const auto at =
      std::search(bytes.begin(), bytes.end(), reinterpret_cast<const std::byte*>(text.data()),
                  reinterpret_cast<const std::byte*>(text.data()) + 6);
  ASSERT_NE(at, bytes.end());
  *at = std::byte{'!'};
  EXPECT_EQ(decode_error(19, bytes).rfind("MapUpdate.incrementals[0].new_crush: the CRUSH map:", 0),
            0u)
      << decode_error(19, bytes);
  CodecLimits small;
  small.max_osds = 8;
  const std::string limited = decode_error(19, encode_body(samples()[19]), small);
  EXPECT_EQ(limited, "MapUpdate.incrementals[0].new_max_osd: expected -1..8, found 12");
  MapUpdate full_only;
  full_only.full = sample_map();
  EXPECT_EQ(decode_error(19, encode_body(full_only), small),
            "MapUpdate.full.max_osd: expected 0..8, found 12");
}

// Every prefix of every sample is refused (the reader never reads past the end), and random
// byte changes decode or are refused, never crash (ASan/UBSan check the memory side).
TEST(Codec, TruncatedAndMangledBodiesAreRefusedWithoutACrash) {
  std::mt19937_64 rng(20261206);
  int decoded = 0, refused = 0;
  for (const MessageBody& body : samples()) {
    SCOPED_TRACE(body_type_name(body_type(body)));
    const std::vector<std::byte> bytes = encode_body(body);
    const size_t step = bytes.size() > 2000 ? bytes.size() / 400 : 1;  // maps: a sample
    for (size_t n = 0; n < bytes.size(); n += step) {
      std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
      ASSERT_FALSE(decode_body(body_type(body), cut).ok()) << "a prefix of " << n << " bytes";
    }
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<std::byte> mangled = bytes;
      if (mangled.empty()) break;
      for (int k = 0; k < 3; ++k) {
        mangled[rng() % mangled.size()] = static_cast<std::byte>(rng() & 0xFF);
      }
      (decode_body(body_type(body), mangled).ok() ? decoded : refused) += 1;
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(decoded, 0);  // a changed number is still a number
}

}  // namespace
}  // namespace granary::realmode
