// The body codec (codec.h). Each body's fields are listed once, in `fields(io, m)`, and the
// same list drives the encoder (Enc, over a WireWriter) and the decoder (Dec, over a
// WireReader): the two directions cannot drift apart.
#include "realmode/codec.h"

#include <array>
#include <memory>
#include <type_traits>
#include <utility>

#include "engine/cluster/osd_map.h"
#include "engine/crush/text_format.h"

namespace granary::realmode {

namespace {

constexpr std::array<const char*, kBodyTypes> kTypeNames = {
    "ReadRequest",       "ReadReply",      "MetadataRequest", "MetadataReply",     "WriteRequest",
    "WriteReply",        "CommitRequest",  "Shutdown",        "ScanRequest",       "ScanReply",
    "RemoveRequest",     "Heartbeat",      "RecoveryPush",    "RecoveryPushReply", "RecoveryRead",
    "RecoveryReadReply", "ReserveRequest", "ReserveGrant",    "MapSubscribe",      "MapUpdate",
    "PgTempRequest",     "OsdDeviceReport"};

// The encoder: values in, bytes out.
class Enc {
 public:
  static constexpr bool kDecoding = false;
  explicit Enc(const CodecLimits& limits) : limits_(limits) {}

  void u32(const char*, uint32_t v) { w_.u32(v); }
  void u64(const char*, uint64_t v) { w_.u64(v); }
  void i32(const char*, int32_t v) { w_.i32(v); }
  void i64(const char*, int64_t v) { w_.i64(v); }
  void f64(const char*, double v) { w_.f64(v); }
  void boolean(const char*, bool v) { w_.boolean(v); }
  void string(const char*, const std::string& v) { w_.string(v); }
  void strings(const char*, const std::vector<std::string>& v) { w_.strings(v); }
  template <typename E>
  void enumeration(const char*, E v, E) {
    w_.u8(static_cast<uint8_t>(v));
  }
  // A list of up to `max` items of at least `min_bytes` each; `each` writes one.
  template <typename T, typename F>
  void list(const char*, const std::vector<T>& v, size_t, uint32_t, F each) {
    w_.u32(static_cast<uint32_t>(v.size()));
    for (const T& item : v) each(item);
  }
  void bools(const char*, const std::vector<bool>& v, uint32_t) {
    w_.u32(static_cast<uint32_t>(v.size()));
    for (bool b : v) w_.boolean(b);
  }
  void crush_map(const char*, const std::shared_ptr<const crush::CrushMap>& map) {
    w_.string(crush::write_text_map(*map));
  }
  bool ok() const { return true; }
  const CodecLimits& limits() const { return limits_; }
  std::vector<std::byte> take() { return w_.take(); }

 private:
  const CodecLimits& limits_;
  WireWriter w_;
};

// The decoder: bytes in, values out; the first problem stops it (every later call is a no-op).
class Dec {
 public:
  static constexpr bool kDecoding = true;
  Dec(std::span<const std::byte> bytes, const CodecLimits& limits)
      : limits_(limits), r_(bytes, limits.wire) {}

  void u32(const char* f, uint32_t& v) { r_.u32(name(f), &v); }
  void u64(const char* f, uint64_t& v) { r_.u64(name(f), &v); }
  void i32(const char* f, int32_t& v) { r_.i32(name(f), &v); }
  void i64(const char* f, int64_t& v) { r_.i64(name(f), &v); }
  void f64(const char* f, double& v) { r_.f64(name(f), &v); }
  void boolean(const char* f, bool& v) { r_.boolean(name(f), &v); }
  void string(const char* f, std::string& v) { r_.string(name(f), &v); }
  void strings(const char* f, std::vector<std::string>& v) { r_.strings(name(f), &v); }
  template <typename E>
  void enumeration(const char* f, E& v, E max) {
    uint8_t x = 0;
    if (!r_.u8(name(f), &x)) return;
    if (x > static_cast<uint8_t>(max)) {
      r_.refuse(name(f), "expected a value 0.." + std::to_string(static_cast<int>(max)) +
                             ", found " + std::to_string(x));
      return;
    }
    v = static_cast<E>(x);
  }
  template <typename T, typename F>
  void list(const char* f, std::vector<T>& v, size_t min_bytes, uint32_t max, F each) {
    uint32_t n = 0;
    if (!r_.count(name(f), &n, min_bytes, max)) return;
    std::vector<T> out(n);
    const std::string outer = prefix_;
    for (uint32_t i = 0; i < n && ok(); ++i) {
      prefix_ = outer + f + "[" + std::to_string(i) + "].";
      each(out[i]);
    }
    prefix_ = outer;
    if (ok()) v = std::move(out);
  }
  void bools(const char* f, std::vector<bool>& v, uint32_t max) {
    uint32_t n = 0;
    if (!r_.count(name(f), &n, 1, max)) return;
    std::vector<bool> out(n);
    for (uint32_t i = 0; i < n && ok(); ++i) {
      bool b = false;
      r_.boolean(name(f), &b);
      out[i] = b;
    }
    if (ok()) v = std::move(out);
  }
  void crush_map(const char* f, std::shared_ptr<const crush::CrushMap>& map) {
    std::string text;
    if (!r_.string(name(f), &text, limits_.max_crush_map_bytes)) return;
    Result<crush::CrushMap> parsed = crush::parse_text_map(text, "the CRUSH map");
    if (!parsed.ok()) {
      r_.refuse(name(f), parsed.status().message());
      return;
    }
    map = std::make_shared<const crush::CrushMap>(std::move(parsed).value());
  }
  void refuse(const char* f, std::string what) { r_.refuse(name(f), std::move(what)); }
  bool ok() const { return r_.ok(); }
  const CodecLimits& limits() const { return limits_; }
  Status finish() { return r_.finish(); }

 private:
  // The field's name within the lists it is in ("objects[3].name").
  const char* name(const char* f) {
    if (prefix_.empty()) return f;
    scratch_ = prefix_ + f;
    return scratch_.c_str();
  }
  const CodecLimits& limits_;
  WireReader r_;
  std::string prefix_, scratch_;
};

// ---- the fields of each body, in declaration order (M is T or const T)

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<ErasureCoding>) {
  io.i32("ec.k", m.k);
  io.i32("ec.m", m.m);
  io.u64("ec.stripe_unit_bytes", m.stripe_unit_bytes);
}

template <typename Io, typename M>
void reply_status(Io& io, M& m) {
  io.boolean("ok", m.ok);
  io.string("error", m.error);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<ReadRequest>) {
  io.u64("request_id", m.request_id);
  io.string("object", m.object);
  io.u64("offset", m.offset);
  io.u64("length", m.length);
  io.string("reply_to", m.reply_to);
  io.f64("sent_at_s", m.sent_at_s);
  fields(io, m.ec, std::type_identity<ErasureCoding>());
  io.strings("shards", m.shards);
  io.i32("shard", m.shard);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<ReadReply>) {
  io.u64("request_id", m.request_id);
  reply_status(io, m);
  io.enumeration("error_code", m.error_code, ReplyError::kIoError);
  io.u64("length", m.length);
  io.f64("sent_at_s", m.sent_at_s);
  io.u64("version", m.version);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<MetadataRequest>) {
  io.u64("request_id", m.request_id);
  io.enumeration("op", m.op, MetadataOp::kCreate);
  io.string("path", m.path);
  io.i64("size_bytes", m.size_bytes);
  io.string("reply_to", m.reply_to);
  io.f64("sent_at_s", m.sent_at_s);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<MetadataReply>) {
  io.u64("request_id", m.request_id);
  reply_status(io, m);
  io.enumeration("error_code", m.error_code, ReplyError::kIoError);
  io.u64("size_bytes", m.size_bytes);
  io.f64("sent_at_s", m.sent_at_s);
  io.u64("stripe_size_bytes", m.stripe_size_bytes);
  io.list("ost_indices", m.ost_indices, 4, io.limits().max_osds,
          [&](auto& ost) { io.u32("ost", ost); });
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<WriteRequest>) {
  io.u64("request_id", m.request_id);
  io.string("object", m.object);
  io.u64("offset", m.offset);
  io.u64("length", m.length);
  io.string("reply_to", m.reply_to);
  io.f64("sent_at_s", m.sent_at_s);
  io.strings("replicas", m.replicas);
  fields(io, m.ec, std::type_identity<ErasureCoding>());
  io.strings("shards", m.shards);
  io.u64("logical_end_bytes", m.logical_end_bytes);
  io.boolean("durable", m.durable);
  io.u64("interval", m.interval);
  io.boolean("recovery_push", m.recovery_push);
  io.u64("version", m.version);
  io.i32("shard", m.shard);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<WriteReply>) {
  io.u64("request_id", m.request_id);
  reply_status(io, m);
  io.enumeration("error_code", m.error_code, ReplyError::kIoError);
  io.u64("length", m.length);
  io.f64("sent_at_s", m.sent_at_s);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<CommitRequest>) {
  io.u64("request_id", m.request_id);
  io.string("object", m.object);
  io.string("reply_to", m.reply_to);
  io.f64("sent_at_s", m.sent_at_s);
}

template <typename Io, typename M>
void fields(Io&, M&, std::type_identity<Shutdown>) {}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<ScanRequest>) {
  io.u64("request_id", m.request_id);
  io.u32("pg", m.pg);
  io.boolean("all_pgs", m.all_pgs);
  io.string("reply_to", m.reply_to);
  io.u32("epoch", m.epoch);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<ScanReply>) {
  io.u64("request_id", m.request_id);
  reply_status(io, m);
  // A listing is at least a name's length, three u64s and an i32.
  io.list("objects", m.objects, 32, io.limits().wire.max_list_items, [&](auto& o) {
    io.string("name", o.name);
    io.u64("size_bytes", o.info.size_bytes);
    io.u64("logical_bytes", o.info.logical_bytes);
    io.u64("version", o.info.version);
    io.i32("shard", o.info.shard);
  });
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<RemoveRequest>) {
  io.u64("request_id", m.request_id);
  io.string("object", m.object);
  io.string("reply_to", m.reply_to);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<Heartbeat>) {
  io.i32("osd", m.osd);
  io.f64("sent_at_s", m.sent_at_s);
  io.u64("incarnation", m.incarnation);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<RecoveryPush>) {
  io.u64("op_id", m.op_id);
  io.u32("pg", m.pg);
  io.i32("shard", m.shard);
  io.u64("offset", m.offset);
  io.u64("length", m.length);
  io.string("reply_to", m.reply_to);
}

// RecoveryPushReply and RecoveryReadReply: the op, its status and the bytes moved.
template <typename Io, typename M>
void recovery_reply(Io& io, M& m) {
  io.u64("op_id", m.op_id);
  reply_status(io, m);
  io.u64("length", m.length);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<RecoveryPushReply>) {
  recovery_reply(io, m);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<RecoveryRead>) {
  io.u64("op_id", m.op_id);
  io.u64("offset", m.offset);
  io.u64("length", m.length);
  io.string("reply_to", m.reply_to);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<RecoveryReadReply>) {
  recovery_reply(io, m);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<ReserveRequest>) {
  io.u64("request_id", m.request_id);
  io.enumeration("op", m.op, ReserveOp::kRelease);
  io.i32("priority", m.priority);
  io.string("holder", m.holder);
  io.string("reply_to", m.reply_to);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<ReserveGrant>) {
  io.u64("request_id", m.request_id);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<MapSubscribe>) {
  io.string("reply_to", m.reply_to);
  io.u32("have_epoch", m.have_epoch);
  io.boolean("confirm", m.confirm);
}

// OSD id lists and pg_temps (maps and PgTempRequest).
template <typename Io, typename V>
void osd_list(Io& io, const char* f, V& v) {
  io.list(f, v, 4, io.limits().max_osds, [&](auto& osd) { io.i32("osd", osd); });
}

template <typename Io, typename V>
void pg_temp_list(Io& io, const char* f, V& v) {
  // An entry is at least its pool, PG, flag and OSD count.
  io.list(f, v, 17, io.limits().wire.max_list_items, [&](auto& e) {
    io.i64("pool", e.pool);
    io.u32("pg", e.pg);
    io.boolean("clear", e.clear);
    osd_list(io, "osds", e.osds);
  });
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<PgTempRequest>) {
  io.string("from", m.from);
  pg_temp_list(io, "entries", m.entries);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<OsdDeviceReport>) {
  io.i32("osd", m.osd);
  io.enumeration("event", m.event, DeviceEvent::kReplacedEmpty);
}

// A map's CRUSH map, or none (an incremental that keeps the map's).
template <typename Io, typename P>
void optional_crush(Io& io, const char* f, P& map) {
  bool has = map != nullptr;
  io.boolean(f, has);
  if (has) io.crush_map(f, map);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<cluster::Incremental>) {
  optional_crush(io, "new_crush", m.new_crush);
  io.i32("new_max_osd", m.new_max_osd);
  if constexpr (Io::kDecoding) {
    const int64_t max = io.limits().max_osds;
    if (io.ok() && (m.new_max_osd < -1 || m.new_max_osd > max)) {
      io.refuse("new_max_osd",
                "expected -1.." + std::to_string(max) + ", found " + std::to_string(m.new_max_osd));
    }
  }
  osd_list(io, "remove", m.remove);
  osd_list(io, "mark_down", m.mark_down);
  osd_list(io, "mark_up", m.mark_up);
  osd_list(io, "mark_out", m.mark_out);
  osd_list(io, "mark_in", m.mark_in);
  io.list("reweight", m.reweight, 8, io.limits().max_osds, [&](auto& r) {
    io.i32("osd", r.first);
    io.u32("reweight", r.second);
  });
  pg_temp_list(io, "pg_temp", m.pg_temp);
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<cluster::Pool>) {
  io.i64("spec.id", m.spec.id);
  io.u32("spec.pg_num", m.spec.pg_num);
  io.u32("spec.pgp_num", m.spec.pgp_num);
  io.i32("spec.size", m.spec.size);
  io.i32("spec.crush_rule", m.spec.crush_rule);
  io.boolean("spec.hashpspool", m.spec.hashpspool);
  io.boolean("spec.erasure", m.spec.erasure);
  io.boolean("redundancy.erasure", m.redundancy.erasure);
  io.i32("redundancy.size", m.redundancy.size);
  io.i32("redundancy.data_chunks", m.redundancy.data_chunks);
  io.i32("min_size", m.min_size);
}

// A full map: its epoch, CRUSH map, OSD states, pools and pg_temps (OsdMap::restore).
void full_map(Enc& io, const std::shared_ptr<const cluster::OsdMap>& map) {
  io.u32("full.epoch", map->epoch());
  io.crush_map("full.crush", map->crush_ptr());
  const placement::OsdStates& s = map->osd_states();
  io.i32("full.max_osd", s.max_osd);
  io.list("full.reweight", s.reweight, 4, io.limits().max_osds,
          [&](uint32_t w) { io.u32("reweight", w); });
  io.bools("full.up", s.up, io.limits().max_osds);
  io.bools("full.exists", s.exists, io.limits().max_osds);
  io.list("full.pools", map->pools(), 1, io.limits().wire.max_list_items,
          [&](const cluster::Pool& p) { fields(io, p, std::type_identity<cluster::Pool>()); });
  std::vector<PgTempEntry> pg_temps;
  for (const auto& [key, osds] : map->pg_temps()) {
    pg_temps.push_back({key.first, key.second, false, osds});
  }
  pg_temp_list(io, "full.pg_temp", pg_temps);
}

void full_map(Dec& io, std::shared_ptr<const cluster::OsdMap>& map) {
  uint32_t epoch = 0;
  std::shared_ptr<const crush::CrushMap> crush;
  placement::OsdStates s;
  std::vector<cluster::Pool> pools;
  std::vector<PgTempEntry> pg_temps;
  io.u32("full.epoch", epoch);
  io.crush_map("full.crush", crush);
  io.i32("full.max_osd", s.max_osd);
  if (io.ok() && (s.max_osd < 0 || static_cast<uint32_t>(s.max_osd) > io.limits().max_osds)) {
    io.refuse("full.max_osd", "expected 0.." + std::to_string(io.limits().max_osds) + ", found " +
                                  std::to_string(s.max_osd));
  }
  io.list("full.reweight", s.reweight, 4, io.limits().max_osds,
          [&](uint32_t& w) { io.u32("reweight", w); });
  io.bools("full.up", s.up, io.limits().max_osds);
  io.bools("full.exists", s.exists, io.limits().max_osds);
  io.list("full.pools", pools, 1, io.limits().wire.max_list_items,
          [&](cluster::Pool& p) { fields(io, p, std::type_identity<cluster::Pool>()); });
  pg_temp_list(io, "full.pg_temp", pg_temps);
  if (!io.ok()) return;
  Result<cluster::OsdMap> restored =
      cluster::OsdMap::restore(epoch, std::move(crush), std::move(s), std::move(pools), pg_temps);
  if (!restored.ok()) {
    io.refuse("full", restored.status().message());
    return;
  }
  map = std::make_shared<const cluster::OsdMap>(std::move(restored).value());
}

template <typename Io, typename M>
void fields(Io& io, M& m, std::type_identity<MapUpdate>) {
  io.u32("first_epoch", m.first_epoch);
  io.list("incrementals", m.incrementals, 1, io.limits().max_incrementals, [&](auto& inc) {
    if constexpr (Io::kDecoding) {
      auto decoded = std::make_shared<cluster::Incremental>();
      fields(io, *decoded, std::type_identity<cluster::Incremental>());
      inc = std::move(decoded);
    } else {
      GRANARY_CHECK(inc != nullptr);
      fields(io, *inc, std::type_identity<cluster::Incremental>());
    }
  });
  bool has_full = m.full != nullptr;
  io.boolean("full", has_full);
  if (has_full) full_map(io, m.full);
}

template <size_t I>
Result<MessageBody> decode_as(std::span<const std::byte> bytes, const CodecLimits& limits) {
  using T = std::variant_alternative_t<I, MessageBody>;
  Dec io(bytes, limits);
  T m;
  fields(io, m, std::type_identity<T>());
  if (Status s = io.finish(); !s.ok()) {
    return Status::invalid_argument(std::string(kTypeNames[I]) + "." + s.message());
  }
  return MessageBody(std::in_place_index<I>, std::move(m));
}

using Decoder = Result<MessageBody> (*)(std::span<const std::byte>, const CodecLimits&);

template <size_t... I>
constexpr std::array<Decoder, sizeof...(I)> make_decoders(std::index_sequence<I...>) {
  return {&decode_as<I>...};
}
constexpr auto kDecoders = make_decoders(std::make_index_sequence<kBodyTypes>());

}  // namespace

uint16_t body_type(const MessageBody& body) {
  return static_cast<uint16_t>(body.index());
}

std::string body_type_name(uint16_t type) {
  return type < kBodyTypes ? kTypeNames[type] : "type " + std::to_string(type);
}

std::vector<std::byte> encode_body(const MessageBody& body) {
  const CodecLimits limits;
  Enc io(limits);
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        fields(io, m, std::type_identity<T>());
      },
      body);
  return io.take();
}

Result<MessageBody> decode_body(uint16_t type, std::span<const std::byte> bytes,
                                const CodecLimits& limits) {
  if (type >= kBodyTypes) {
    return Status::invalid_argument("body type " + std::to_string(type) +
                                    ": unknown (this granary knows 0.." +
                                    std::to_string(kBodyTypes - 1) + ")");
  }
  return kDecoders[type](bytes, limits);
}

Result<std::vector<std::byte>> encode_message(const Message& message, uint64_t sequence) {
  const Payload& p = message.payload;
  if (p.size_bytes != p.bytes.size()) {
    return Status::invalid_argument(body_type_name(body_type(message.body)) + ": a payload of " +
                                    std::to_string(p.size_bytes) + " bytes holds " +
                                    std::to_string(p.bytes.size()) +
                                    " bytes of data; real mode sends the bytes themselves");
  }
  const std::vector<std::byte> body = encode_body(message.body);
  return encode_frame(body_type(message.body), sequence, body,
                      std::span<const std::byte>(p.bytes.data(), p.bytes.size()));
}

Result<Message> decode_message(const Frame& frame, const CodecLimits& limits) {
  Result<MessageBody> body = decode_body(frame.header.type, frame.body, limits);
  if (!body.ok()) return body.status();
  Message m;
  m.body = std::move(body).value();
  m.payload = Payload::of(Buffer::copy_of(frame.payload));
  m.header_bytes = frame.body.size();
  return m;
}

}  // namespace granary::realmode
