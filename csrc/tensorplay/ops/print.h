#pragma once
// Printing tensors as Python's repr prints them, which is PyTorch's layout: tensor([1., 2.]),
// with the dtype, device and autograd suffixes and the summary of large tensors. The options are
// those of Python's tensorplay.set_printoptions, one setting for both languages.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "tensorplay/core/tensor.h"

namespace tp {

struct PrintOptions {
  int64_t precision = 4;    // digits after the point
  double threshold = 1000;  // more elements than this are summarised ...
  int64_t edgeitems = 3;    // ... to this many at each end of each dim
  int64_t linewidth = 80;
  std::optional<bool> sci_mode;  // unset: scientific notation when the values shown need it
};

// The options operator<< and to_string print with: PrintOptions{} until set, for the whole process.
PrintOptions get_printoptions();
void set_printoptions(const PrintOptions& options);

// repr(t) in Python: "tensor([1., 2.], requires_grad=True)".
std::string to_string(const Tensor& t, const PrintOptions& options);
std::string to_string(const Tensor& t);
std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace tp
