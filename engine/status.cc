#include "engine/status.h"

#include <cstdio>

namespace granary {

std::string Status::to_string() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kInvalidArgument:
      name = "invalid argument";
      break;
    case Code::kNotFound:
      name = "not found";
      break;
    case Code::kCorruption:
      name = "corruption";
      break;
    case Code::kIOError:
      name = "I/O error";
      break;
    case Code::kNotSupported:
      name = "not supported";
      break;
    case Code::kNoSpace:
      name = "no space";
      break;
    case Code::kUnavailable:
      name = "unavailable";
      break;
    case Code::kPermissionDenied:
      name = "permission denied";
      break;
  }
  return std::string(name) + ": " + message_;
}

namespace internal {
void check_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "granary: internal check failed: %s at %s:%d\n", expr, file, line);
  std::abort();
}
}  // namespace internal

}  // namespace granary
