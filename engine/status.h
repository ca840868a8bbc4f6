// Status and Result: how engine/, models/ and realmode/ report errors.
//
// A Status is either OK or carries one of a few codes plus a message that is meant for a human:
// it names the input (file, line, JSON path, flag), what was expected and what was found.
// Result<T> is a value or a non-OK Status. Both are plain values, safe to copy and to share
// between threads once constructed. Modelled on leveldb's include/leveldb/status.h.
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace granary {

class Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,
    kNotFound,
    kCorruption,
    kIOError,
    kNotSupported,
    kNoSpace,      // a device or region is full; the message names it, the bytes asked and free
    kUnavailable,  // a host or service that cannot be reached now (down, cut off); may come back
    kPermissionDenied,  // a peer that could not prove it holds the cluster key (realmode/auth.h)
  };

  Status() = default;

  static Status ok_status() { return Status(); }
  static Status invalid_argument(std::string msg) {
    return {Code::kInvalidArgument, std::move(msg)};
  }
  static Status not_found(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status corruption(std::string msg) { return {Code::kCorruption, std::move(msg)}; }
  static Status io_error(std::string msg) { return {Code::kIOError, std::move(msg)}; }
  static Status not_supported(std::string msg) { return {Code::kNotSupported, std::move(msg)}; }
  static Status no_space(std::string msg) { return {Code::kNoSpace, std::move(msg)}; }
  static Status unavailable(std::string msg) { return {Code::kUnavailable, std::move(msg)}; }
  static Status permission_denied(std::string msg) {
    return {Code::kPermissionDenied, std::move(msg)};
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // "OK", or the code's name followed by the message ("invalid argument: map.txt:3:7: ...").
  std::string to_string() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

// Checks an invariant in every build type (release included). A failure is a bug in Granary,
// never a consequence of user input: user input gets a Status.
#define GRANARY_CHECK(cond)                                                    \
  do {                                                                         \
    if (!(cond)) ::granary::internal::check_failed(#cond, __FILE__, __LINE__); \
  } while (0)

namespace internal {
[[noreturn]] void check_failed(const char* expr, const char* file, int line);
}  // namespace internal

// A value of type T, or the Status that explains why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    GRANARY_CHECK(!std::get<Status>(v_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  // The error; OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  const T& value() const& {
    GRANARY_CHECK(ok());
    return std::get<T>(v_);
  }
  T& value() & {
    GRANARY_CHECK(ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    GRANARY_CHECK(ok());
    return std::get<T>(std::move(v_));
  }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace granary
