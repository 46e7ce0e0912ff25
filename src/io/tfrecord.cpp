#include "io/tfrecord.hpp"

#include <cstdio>

#include "io/crc32c.hpp"

namespace altgrad::io {
namespace {

constexpr std::size_t kLengthBytes = 8;
constexpr std::size_t kCrcBytes = 4;

// Byte order is fixed by the format, not by the host, so integers are composed byte by byte.
template <typename Unsigned>
void store_little_endian(Unsigned value, std::span<std::byte, sizeof(Unsigned)> out) {
  for (std::size_t i = 0; i < sizeof(Unsigned); ++i) out[i] = static_cast<std::byte>((value >> (8 * i)) & 0xFFu);
}

template <typename Unsigned>
Unsigned load_little_endian(std::span<const std::byte> in) {
  Unsigned value = 0;
  for (std::size_t i = 0; i < sizeof(Unsigned); ++i)
    value |= static_cast<Unsigned>(std::to_integer<Unsigned>(in[i]) << (8 * i));
  return value;
}

std::string hex32(std::uint32_t value) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08X", static_cast<unsigned>(value));
  return text;
}

std::string truncated(const char* part, std::uint64_t needed, std::uint64_t remaining) {
  return std::string("truncated in the ") + part + ": it needs " + std::to_string(needed) + " bytes, the stream has " +
         std::to_string(remaining) + " left";
}

std::string crc_mismatch(const char* part, std::uint32_t stored, std::uint32_t computed) {
  return std::string("CRC mismatch in the ") + part + " (stored " + hex32(stored) + ", computed " + hex32(computed) +
         ")";
}

}  // namespace

std::array<std::byte, kTfRecordHeaderBytes> tfrecord_header(std::uint64_t data_length) {
  std::array<std::byte, kTfRecordHeaderBytes> header{};
  const std::span<std::byte, kTfRecordHeaderBytes> out(header);
  store_little_endian(data_length, out.first<kLengthBytes>());
  store_little_endian(masked_crc32c(out.first<kLengthBytes>()), out.subspan<kLengthBytes, kCrcBytes>());
  return header;
}

std::array<std::byte, kTfRecordFooterBytes> tfrecord_footer(std::span<const std::byte> data) {
  std::array<std::byte, kTfRecordFooterBytes> footer{};
  store_little_endian(masked_crc32c(data), std::span<std::byte, kCrcBytes>(footer));
  return footer;
}

std::string tfrecord_location(std::size_t record_index, std::uint64_t record_offset) {
  return "record " + std::to_string(record_index) + " at byte " + std::to_string(record_offset);
}

TfRecordError::TfRecordError(std::size_t record_index, std::uint64_t record_offset, const std::string& problem)
    : std::runtime_error(tfrecord_location(record_index, record_offset) + ": " + problem),
      record_index_(record_index),
      record_offset_(record_offset) {}

namespace {

// The record starting at `offset`, checked: its length is trusted only once its CRC matches.
TfRecord record_at(std::span<const std::byte> stream, std::uint64_t offset, std::size_t index) {
  const std::span<const std::byte> rest = stream.subspan(offset);
  if (rest.size() < kTfRecordHeaderBytes)
    throw TfRecordError(index, offset, truncated("length header", kTfRecordHeaderBytes, rest.size()));

  const std::span<const std::byte> length_bytes = rest.first(kLengthBytes);
  const auto stored_length_crc = load_little_endian<std::uint32_t>(rest.subspan(kLengthBytes, kCrcBytes));
  const std::uint32_t length_crc = masked_crc32c(length_bytes);
  if (stored_length_crc != length_crc)
    throw TfRecordError(index, offset, crc_mismatch("length header", stored_length_crc, length_crc));

  // Compared without adding to the length, so a huge (yet CRC-valid) length cannot overflow.
  const auto length = load_little_endian<std::uint64_t>(length_bytes);
  const std::uint64_t after_header = rest.size() - kTfRecordHeaderBytes;
  if (after_header < kTfRecordFooterBytes || length > after_header - kTfRecordFooterBytes)
    throw TfRecordError(index, offset, truncated("data or its CRC", length + kTfRecordFooterBytes, after_header));

  const std::span<const std::byte> data = rest.subspan(kTfRecordHeaderBytes, length);
  const auto stored_data_crc =
      load_little_endian<std::uint32_t>(rest.subspan(kTfRecordHeaderBytes + length, kCrcBytes));
  const std::uint32_t data_crc = masked_crc32c(data);
  if (stored_data_crc != data_crc) throw TfRecordError(index, offset, crc_mismatch("data", stored_data_crc, data_crc));
  return {offset, data};
}

}  // namespace

std::vector<TfRecord> split_tfrecords(std::span<const std::byte> stream) {
  std::vector<TfRecord> records;
  std::uint64_t offset = 0;
  while (offset < stream.size()) {
    records.push_back(record_at(stream, offset, records.size()));
    offset += kTfRecordHeaderBytes + records.back().data.size() + kTfRecordFooterBytes;
  }
  return records;
}

}  // namespace altgrad::io
