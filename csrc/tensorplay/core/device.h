#pragma once
// Where a tensor's bytes live: "cpu", "cuda" or "cuda:N", or "meta": tensors with sizes, strides
// and a dtype but no data, for shapes and parameter counts of models too big to hold.

#include <cstdint>
#include <string>
#include <string_view>

namespace tp {

enum class DeviceType : int8_t { CPU, CUDA, Meta };
inline constexpr int kNumDeviceTypes = 3;

std::string_view name(DeviceType t);
// "cpu" / "cuda" / "meta"; anything else raises a RuntimeError listing the supported types.
DeviceType parse_device_type(std::string_view s);

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = -1;  // -1: no index given ("cuda" rather than "cuda:0")

  Device() = default;
  Device(DeviceType t, int i = -1);
  // Parses "cpu", "cuda", "cuda:1", "meta"; malformed strings raise.
  explicit Device(std::string_view s);

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool is_meta() const { return type == DeviceType::Meta; }
  std::string str() const;
  // Tensors always live on an indexed device: "cuda" means the current one, cuda:0.
  Device with_index() const { return {type, index < 0 && type == DeviceType::CUDA ? 0 : index}; }
  bool operator==(const Device&) const = default;
};

}  // namespace tp
