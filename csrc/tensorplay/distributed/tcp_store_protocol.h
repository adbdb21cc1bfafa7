#pragma once
// TCPStore's wire format, shared by the client (tcp_store.cpp) and the server
// (tcp_store_server.cpp). Every message is a frame: a 4-byte little-endian length, then a payload.
// A request's payload is an Op byte then its fields; a reply's is a Status byte then its fields.
// A field is a 4-byte little-endian length then that many bytes; an integer is an 8-byte field.
//
// Requests and their replies:
//   Join magic                      -> Ok                 (opens every connection)
//   Set key value                   -> Ok
//   Get key                         -> Ok value           (held until key exists)
//   Add key delta                   -> Ok sum
//   CompareSet key expected desired -> Ok value
//   Check key...                    -> Ok 0|1
//   Delete key                      -> Ok 0|1
//   NumKeys                         -> Ok n
//   Wait key...                     -> Ok                 (held until every key exists)
//   Cancel                          -> Cancelled missing-key...  (ends a held Get/Wait)
// Any request may instead be answered Error kind message (kind: tp::ErrorKind).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tensorplay/core/error.h"
#include "tensorplay/distributed/store.h"

namespace tp::distributed::wire {

enum class Op : uint8_t { Join = 1, Set, Get, Add, CompareSet, Check, Delete, NumKeys, Wait, Cancel };
enum class Status : uint8_t { Ok = 0, Error, Cancelled };

inline constexpr std::string_view kMagic = "tensorplay.TCPStore/1";
inline constexpr size_t kHeader = 4;
// A longer frame is garbage on the wire (or a stranger speaking another protocol), not a value
// worth allocating for.
inline constexpr uint32_t kMaxFrame = 1u << 30;
// The first frame must be a Join this short: a stranger is hung up on before it can hold the
// server's memory.
inline constexpr uint32_t kMaxJoinFrame = 256;

inline void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

inline uint32_t get_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

class FrameWriter {
 public:
  explicit FrameWriter(Op op) : FrameWriter(static_cast<uint8_t>(op)) {}
  explicit FrameWriter(Status status) : FrameWriter(static_cast<uint8_t>(status)) {}

  FrameWriter& field(std::string_view s) {
    put_u32(frame_, static_cast<uint32_t>(s.size()));
    frame_.append(s);
    return *this;
  }
  FrameWriter& field(const Bytes& b) {
    return field(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
  }
  FrameWriter& field(int64_t v) {
    std::string s;
    put_u32(s, static_cast<uint32_t>(v));
    put_u32(s, static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32));
    return field(s);
  }
  FrameWriter& fields(const std::vector<std::string>& keys) {
    for (const auto& key : keys) field(key);
    return *this;
  }
  std::string finish() && {
    std::string length;
    put_u32(length, static_cast<uint32_t>(frame_.size() - kHeader));
    frame_.replace(0, kHeader, length);
    return std::move(frame_);
  }

 private:
  explicit FrameWriter(uint8_t head) : frame_(kHeader, '\0') { frame_.push_back(static_cast<char>(head)); }
  std::string frame_;
};

// Reads a payload's fields in order; a payload cut short is a RuntimeError.
class FrameReader {
 public:
  explicit FrameReader(std::string payload) : payload_(std::move(payload)) {
    TP_CHECK(!payload_.empty(), "[TCPStore] malformed message: empty payload");
  }

  uint8_t head() const { return static_cast<uint8_t>(payload_[0]); }
  bool done() const { return pos_ == payload_.size(); }

  std::string_view field() {
    TP_CHECK(payload_.size() - pos_ >= 4, "[TCPStore] malformed message: a field is cut short");
    uint32_t n = get_u32(payload_.data() + pos_);
    TP_CHECK(payload_.size() - pos_ - 4 >= n, "[TCPStore] malformed message: a field is cut short");
    std::string_view out(payload_.data() + pos_ + 4, n);
    pos_ += 4 + n;
    return out;
  }
  std::string str() { return std::string(field()); }
  Bytes bytes() {
    std::string_view f = field();
    return Bytes(f.begin(), f.end());
  }
  int64_t integer() {
    std::string_view f = field();
    TP_CHECK(f.size() == 8, "[TCPStore] malformed message: an integer of ", f.size(), " bytes");
    return static_cast<int64_t>(uint64_t(get_u32(f.data())) | uint64_t(get_u32(f.data() + 4)) << 32);
  }
  std::vector<std::string> rest() {
    std::vector<std::string> out;
    while (!done()) out.push_back(str());
    return out;
  }

 private:
  std::string payload_;
  size_t pos_ = 1;
};

}  // namespace tp::distributed::wire
