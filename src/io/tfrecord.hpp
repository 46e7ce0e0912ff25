#pragma once
// TFRecord framing, the container TensorBoard event files use. A file is a sequence of records:
//
//   offset       size    field
//   0            8       length of the data, uint64 little-endian
//   8            4       masked_crc32c of the 8 length bytes, uint32 little-endian
//   12           length  data (in an event file: one serialized Event)
//   12 + length  4       masked_crc32c of the data, uint32 little-endian
//
// The length has its own CRC so a reader can trust it before reading that many bytes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace altgrad::io {

inline constexpr std::size_t kTfRecordHeaderBytes = 12;  // length and its CRC
inline constexpr std::size_t kTfRecordFooterBytes = 4;   // the data's CRC

std::array<std::byte, kTfRecordHeaderBytes> tfrecord_header(std::uint64_t data_length);
std::array<std::byte, kTfRecordFooterBytes> tfrecord_footer(std::span<const std::byte> data);

// One record found in a byte stream: where it starts, and its data (a view into the stream).
struct TfRecord {
  std::uint64_t offset = 0;
  std::span<const std::byte> data;
};

// "record <index> at byte <offset>", records numbered from 0: how errors point into a stream.
std::string tfrecord_location(std::size_t record_index, std::uint64_t record_offset);

// A stream that is not a well-formed sequence of records. what() reads
// "record <index> at byte <offset>: <problem>", records numbered from 0.
class TfRecordError : public std::runtime_error {
 public:
  TfRecordError(std::size_t record_index, std::uint64_t record_offset, const std::string& problem);
  std::size_t record_index() const { return record_index_; }
  std::uint64_t record_offset() const { return record_offset_; }

 private:
  std::size_t record_index_;
  std::uint64_t record_offset_;
};

// Splits a whole stream into its records, checking both CRCs of each. Throws TfRecordError for a
// record cut short (the stream ends inside its header, data or data CRC) or a CRC mismatch.
std::vector<TfRecord> split_tfrecords(std::span<const std::byte> stream);

}  // namespace altgrad::io
