#pragma once
// How a reducing collective combines the ranks' values (torch.distributed.ReduceOp).

#include <string_view>

namespace tp::distributed {

enum class ReduceOp { SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR };

constexpr std::string_view name(ReduceOp op) {
  constexpr std::string_view names[] = {"SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"};
  return names[static_cast<int>(op)];
}

}  // namespace tp::distributed
