#pragma once
// Integers read from JSON files a user can hand us (checkpoints, recipes). nlohmann's get<T>()
// converts any number with a plain cast, so 1e300 read as an integer is undefined behaviour and
// -1 read as an unsigned wraps; readers ask here instead and report the field.
#include <cstdint>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

namespace altgrad::io {

// The value when it is a JSON integer (written without fraction or exponent) that T holds.
template <typename T>
std::optional<T> json_integer(const nlohmann::json& value) {
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return static_cast<T>(u);
  } else if (value.is_number_integer()) {
    const auto i = value.get<std::int64_t>();
    if constexpr (std::numeric_limits<T>::is_signed) {
      if (i >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
          i <= static_cast<std::int64_t>(std::numeric_limits<T>::max())) {
        return static_cast<T>(i);
      }
    } else if (i >= 0) {
      return static_cast<T>(i);
    }
  }
  return std::nullopt;
}

}  // namespace altgrad::io
