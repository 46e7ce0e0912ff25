#pragma once
// CRC-32C (Castagnoli), the checksum TFRecord files use to guard each record's length and data.
//
//   crc32c(data)    reflected polynomial 0x82F63B78, initial value and final XOR 0xFFFFFFFF
//                   (RFC 3720 §B.4; "123456789" gives 0xE3069283)
//   masked_crc32c   TFRecord's stored form: rotate the CRC right by 15 bits, then add 0xA282EAD8
//                   (mod 2^32). Masking keeps a CRC computed over bytes that themselves hold CRCs
//                   from being trivially predictable.
#include <cstddef>
#include <cstdint>
#include <span>

namespace altgrad::io {

std::uint32_t crc32c(std::span<const std::byte> data);

std::uint32_t mask_crc32c(std::uint32_t crc);

// mask_crc32c(crc32c(data)).
std::uint32_t masked_crc32c(std::span<const std::byte> data);

}  // namespace altgrad::io
