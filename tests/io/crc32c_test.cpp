// CRC-32C against the published check values, and TFRecord's masking against hand computation.
#include "io/crc32c.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace altgrad::io_test {
namespace {

using io::crc32c;
using io::mask_crc32c;
using io::masked_crc32c;

std::array<std::byte, 32> filled(std::byte value) {
  std::array<std::byte, 32> bytes{};
  bytes.fill(value);
  return bytes;
}

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

// RFC 3720 (iSCSI), appendix B.4.
TEST(Crc32c, MatchesRfc3720Vectors) {
  EXPECT_EQ(crc32c(filled(std::byte{0x00})), 0x8A9136AAu);
  EXPECT_EQ(crc32c(filled(std::byte{0xFF})), 0x62A8AB43u);
  std::array<std::byte, 32> ascending{};
  for (std::size_t i = 0; i < ascending.size(); ++i) ascending[i] = static_cast<std::byte>(i);
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
  std::array<std::byte, 32> descending{};
  for (std::size_t i = 0; i < descending.size(); ++i) descending[i] = static_cast<std::byte>(31 - i);
  EXPECT_EQ(crc32c(descending), 0x113FDB5Cu);
}

// The catalogue's check value for CRC-32/ISCSI.
TEST(Crc32c, MatchesCheckValue) { EXPECT_EQ(crc32c(bytes_of("123456789")), 0xE3069283u); }

TEST(Crc32c, EmptyInputIsZero) { EXPECT_EQ(crc32c({}), 0u); }

// Rotating 0xE3069283 right by 15 bits gives 0x2507C60D (its low 15 bits 0x1283 move to the top);
// adding 0xA282EAD8 gives 0xC78AB0E5.
TEST(Crc32c, MaskRotatesAndAddsTheDelta) {
  EXPECT_EQ(mask_crc32c(0xE3069283u), 0xC78AB0E5u);
  EXPECT_EQ(masked_crc32c(bytes_of("123456789")), 0xC78AB0E5u);
  EXPECT_EQ(mask_crc32c(0u), 0xA282EAD8u);
}

TEST(Crc32c, MaskAdditionWrapsModulo2To32) { EXPECT_EQ(mask_crc32c(0xFFFFFFFFu), 0xA282EAD7u); }

}  // namespace
}  // namespace altgrad::io_test
