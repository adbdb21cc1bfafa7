#pragma once
// TP_ARG(T, name) declares one field of an options struct with LibTorch's chainable accessors:
// `Conv2dOptions(1, 32, 3).stride(2).padding(1)` sets, `options.stride()` reads, and a default
// follows the macro: `TP_ARG(double, eps) = 1e-5;`. The field itself is private.

#define TP_ARG(T, name)                     \
 public:                                    \
  auto& name(const T& value) {              \
    name##_ = value;                        \
    return *this;                           \
  }                                         \
  const T& name() const { return name##_; } \
                                            \
 private:                                   \
  T name##_
