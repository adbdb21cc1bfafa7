#pragma once
// Errors. Every check names the op first: "[matmul] shapes [2, 3] and [4, 5] cannot be multiplied".
// The kind decides which Python exception the bindings raise.

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tp {

// RuntimeErrors of PyTorch's subclasses: LinAlg, a matrix an op cannot factor (singular, not
// positive-definite: torch.linalg.LinAlgError); DistStore, a store's timeout
// (torch.distributed.DistStoreError); DistNetwork, a refused or lost store connection (DistNetworkError).
enum class ErrorKind { Runtime, Type, Value, Index, NotImplemented, LinAlg, DistStore, DistNetwork };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
template <class... Args>
[[noreturn]] void fail(ErrorKind kind, const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw Error(kind, os.str());
}
}  // namespace detail

// Runs f(); an error from the ops it is built on is re-raised as op's own ("[dist] [sub] ..."), so
// that a composite's errors name the op that was called.
template <class F>
decltype(auto) with_op_name(const char* op, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    std::string_view what = e.what();
    if (what.starts_with("[") && what.substr(1).starts_with(op) &&
        what.substr(1 + std::string_view(op).size()).starts_with("]"))
      throw;
    detail::fail(e.kind(), "[", op, "] ", what);
  }
}

}  // namespace tp

#define TP_CHECK_KIND(kind, cond, ...) \
  do {                                 \
    if (!(cond)) [[unlikely]]          \
      ::tp::detail::fail(kind, __VA_ARGS__); \
  } while (0)

// RuntimeError, the default.
#define TP_CHECK(cond, ...) TP_CHECK_KIND(::tp::ErrorKind::Runtime, cond, __VA_ARGS__)
#define TP_CHECK_TYPE(cond, ...) TP_CHECK_KIND(::tp::ErrorKind::Type, cond, __VA_ARGS__)
#define TP_CHECK_VALUE(cond, ...) TP_CHECK_KIND(::tp::ErrorKind::Value, cond, __VA_ARGS__)
#define TP_CHECK_INDEX(cond, ...) TP_CHECK_KIND(::tp::ErrorKind::Index, cond, __VA_ARGS__)
#define TP_FAIL(...) ::tp::detail::fail(::tp::ErrorKind::Runtime, __VA_ARGS__)
#define TP_NOT_IMPLEMENTED(...) ::tp::detail::fail(::tp::ErrorKind::NotImplemented, __VA_ARGS__)
