#include "io/crc32c.hpp"

#include <array>

namespace altgrad::io {
namespace {

constexpr std::uint32_t kReflectedCastagnoli = 0x82F63B78u;
constexpr std::uint32_t kMaskDelta = 0xA282EAD8u;

// table[b] is the CRC register after shifting the byte b through it bit by bit, so the main loop
// consumes a whole byte with one lookup.
constexpr std::array<std::uint32_t, 256> make_byte_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    std::uint32_t reg = byte;
    for (int bit = 0; bit < 8; ++bit) reg = (reg & 1u) ? (reg >> 1) ^ kReflectedCastagnoli : reg >> 1;
    table[byte] = reg;
  }
  return table;
}

constexpr std::array<std::uint32_t, 256> kByteTable = make_byte_table();

}  // namespace

std::uint32_t crc32c(std::span<const std::byte> data) {
  std::uint32_t reg = 0xFFFFFFFFu;
  for (const std::byte b : data) reg = kByteTable[(reg ^ std::to_integer<std::uint32_t>(b)) & 0xFFu] ^ (reg >> 8);
  return reg ^ 0xFFFFFFFFu;
}

std::uint32_t mask_crc32c(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

std::uint32_t masked_crc32c(std::span<const std::byte> data) { return mask_crc32c(crc32c(data)); }

}  // namespace altgrad::io
