#pragma once
// Codes of a format kept one or two bytes each, little-endian, in one byte buffer: the storage of
// code-only weights (code_weights.hpp) and of quantized optimizer state (quantized_state.hpp).
#include <cstddef>
#include <cstdint>
#include <span>

#include "format/spec.hpp"

namespace altgrad::optim {

// Bytes per code: one for formats of up to 8 bits, two for wider ones (at most 16 bits).
inline std::size_t code_bytes(const format::Format& f) { return f.width <= 8 ? 1 : 2; }

inline std::uint32_t read_code(std::span<const std::uint8_t> codes, std::size_t bytes, std::size_t i) {
  if (bytes == 1) return codes[i];
  return static_cast<std::uint32_t>(codes[2 * i]) | (static_cast<std::uint32_t>(codes[2 * i + 1]) << 8);
}

inline void write_code(std::span<std::uint8_t> codes, std::size_t bytes, std::size_t i, std::uint32_t code) {
  if (bytes == 1) {
    codes[i] = static_cast<std::uint8_t>(code);
  } else {
    codes[2 * i] = static_cast<std::uint8_t>(code);
    codes[2 * i + 1] = static_cast<std::uint8_t>(code >> 8);
  }
}

}  // namespace altgrad::optim
