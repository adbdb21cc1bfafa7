#include "tensorplay/core/device.h"

#include <charconv>

#include "tensorplay/core/error.h"

namespace tp {

std::string_view name(DeviceType t) {
  switch (t) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda";
    case DeviceType::Meta: return "meta";
  }
  return "?";
}

DeviceType parse_device_type(std::string_view s) {
  for (DeviceType t : {DeviceType::CPU, DeviceType::CUDA, DeviceType::Meta})
    if (s == name(t)) return t;
  TP_FAIL("Expected one of cpu, cuda, meta device type at start of device string: ", s);
}

Device::Device(DeviceType t, int i) : type(t), index(i) {
  TP_CHECK(i >= -1, "Device index must be -1 or non-negative, got ", i);
  TP_CHECK(t != DeviceType::CPU || i <= 0, "CPU device index must be -1 or zero, got ", i);
}

Device::Device(std::string_view s) {
  auto colon = s.find(':');
  type = parse_device_type(s.substr(0, colon));
  if (colon == std::string_view::npos) return;
  std::string_view digits = s.substr(colon + 1);
  int value = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  bool well_formed = !digits.empty() && ec == std::errc() && end == digits.data() + digits.size() &&
                     digits[0] != '-' && !(digits.size() > 1 && digits[0] == '0');
  TP_CHECK(well_formed, "Invalid device string: '", s, "'");
  *this = Device(type, value);
}

std::string Device::str() const {
  std::string s(name(type));
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

}  // namespace tp
