// TensorBoard event files: what TensorBoardWriter writes, read back by the reader, and checked
// independently of the schema: the TFRecord framing is split by hand here and one record's Event
// is decoded with a small protobuf wire-format walker, so a mistake shared by the writer's and the
// reader's schema (a wrong field number or type) cannot pass unnoticed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/crc32c.hpp"
#include "io/tensorboard_histogram.hpp"
#include "io/tensorboard_reader.hpp"
#include "io/tensorboard_writer.hpp"
#include "io/tfrecord.hpp"
#include "support/error_message.hpp"

namespace altgrad::io_test {
namespace {

namespace fs = std::filesystem;
using altgrad::test_support::mentions;
using altgrad::test_support::message_of;
using io::read_tensorboard_events;
using io::TaggedScalar;
using io::TensorBoardEvent;
using io::TensorBoardHistogram;
using io::TensorBoardReadError;
using io::TensorBoardWriteError;
using io::TensorBoardWriter;

// ---- Files ----------------------------------------------------------------------------------------

std::vector<std::byte> file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto bytes = std::as_bytes(std::span(chars));
  return {bytes.begin(), bytes.end()};
}

void write_file(const fs::path& path, std::span<const std::byte> bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// ---- Little-endian fields and TFRecord framing, by hand ----------------------------------------

std::uint64_t little_endian(std::span<const std::byte> bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) value |= std::to_integer<std::uint64_t>(bytes[i]) << (8 * i);
  return value;
}

struct HandRecord {
  std::size_t offset = 0;
  std::span<const std::byte> length_bytes;
  std::uint32_t length_crc = 0;
  std::span<const std::byte> data;
  std::uint32_t data_crc = 0;
};

// Splits a well-formed file: 8-byte length, 4-byte CRC, data, 4-byte CRC, repeated.
std::vector<HandRecord> split_by_hand(std::span<const std::byte> file) {
  std::vector<HandRecord> records;
  std::size_t at = 0;
  while (at < file.size()) {
    HandRecord r;
    r.offset = at;
    r.length_bytes = file.subspan(at, 8);
    const std::size_t length = little_endian(r.length_bytes);
    r.length_crc = static_cast<std::uint32_t>(little_endian(file.subspan(at + 8, 4)));
    r.data = file.subspan(at + 12, length);
    r.data_crc = static_cast<std::uint32_t>(little_endian(file.subspan(at + 12 + length, 4)));
    records.push_back(r);
    at += 12 + length + 4;
  }
  EXPECT_EQ(at, file.size()) << "the last record runs past the end of the file";
  return records;
}

// ---- Protobuf wire format, by hand ----------------------------------------------------------------

struct WireField {
  std::uint64_t number = 0;
  std::uint64_t wire_type = 0;
  std::uint64_t varint = 0;            // wire type 0
  std::span<const std::byte> payload;  // wire types 1 (8 bytes), 2 (length-delimited), 5 (4 bytes)
};

std::uint64_t read_varint(std::span<const std::byte> bytes, std::size_t& at) {
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at >= bytes.size()) throw std::runtime_error("varint runs past the end of the message");
    const auto byte = std::to_integer<std::uint64_t>(bytes[at++]);
    value |= (byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  throw std::runtime_error("varint longer than 10 bytes");
}

std::span<const std::byte> take(std::span<const std::byte> bytes, std::size_t& at, std::size_t count) {
  if (count > bytes.size() - at) throw std::runtime_error("field runs past the end of the message");
  at += count;
  return bytes.subspan(at - count, count);
}

std::vector<WireField> wire_fields(std::span<const std::byte> message) {
  std::vector<WireField> fields;
  std::size_t at = 0;
  while (at < message.size()) {
    WireField f;
    const std::uint64_t key = read_varint(message, at);
    f.number = key >> 3;
    f.wire_type = key & 7;
    switch (f.wire_type) {
      case 0: f.varint = read_varint(message, at); break;
      case 1: f.payload = take(message, at, 8); break;
      case 2: {
        const std::uint64_t length = read_varint(message, at);
        f.payload = take(message, at, length);
        break;
      }
      case 5: f.payload = take(message, at, 4); break;
      default: throw std::runtime_error("unexpected wire type " + std::to_string(f.wire_type));
    }
    fields.push_back(f);
  }
  return fields;
}

std::vector<WireField> numbered(const std::vector<WireField>& fields, std::uint64_t number) {
  std::vector<WireField> found;
  for (const WireField& f : fields)
    if (f.number == number) found.push_back(f);
  return found;
}

// The one field with this number and wire type (a test failure otherwise).
WireField single(const std::vector<WireField>& fields, std::uint64_t number, std::uint64_t wire_type) {
  const std::vector<WireField> found = numbered(fields, number);
  EXPECT_EQ(found.size(), 1u) << "field " << number;
  if (found.empty()) return {};
  EXPECT_EQ(found[0].wire_type, wire_type) << "field " << number;
  return found[0];
}

double as_double(std::span<const std::byte> payload) { return std::bit_cast<double>(little_endian(payload)); }
float as_float(std::span<const std::byte> payload) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(little_endian(payload)));
}
std::string as_string(std::span<const std::byte> payload) {
  return {reinterpret_cast<const char*>(payload.data()), payload.size()};
}

std::vector<double> packed_doubles(std::span<const std::byte> payload) {
  EXPECT_EQ(payload.size() % 8, 0u);
  std::vector<double> values;
  for (std::size_t at = 0; at + 8 <= payload.size(); at += 8) values.push_back(as_double(payload.subspan(at, 8)));
  return values;
}

// ---- Fixture --------------------------------------------------------------------------------------

// A run directory per test, named after the process and the test so parallel runs never share it.
class EventFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("altgrad_tensorboard_" + std::to_string(::getpid()) + "_" + test->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // A file with a version record, one scalar (record 1) and one histogram (record 2).
  fs::path small_event_file() {
    TensorBoardWriter writer(dir_);
    writer.scalar("loss", 1, 2.5);
    writer.histogram("weights", 1, sample_histogram());
    writer.flush();
    return writer.path();
  }

  static TensorBoardHistogram sample_histogram() {
    const std::vector<float> values = {-1.5f, -0.25f, 0.0f, 0.125f, 0.5f, 3.0f, 40.0f};
    const std::vector<double> edges = {-1.0, 0.0, 1.0, 10.0};
    return io::tensorboard_histogram(values, edges);
  }

  fs::path dir_;
};

// ---- The writer's file, read back ---------------------------------------------------------------

TEST_F(EventFileTest, FileIsNamedAfterTimeAndHostAndStartsWithTheVersionRecord) {
  const double before = now_seconds();
  TensorBoardWriter writer(dir_ / "new_run");
  const double after = now_seconds();
  EXPECT_EQ(writer.path().parent_path(), dir_ / "new_run");
  const std::string name = writer.path().filename().string();
  EXPECT_EQ(name.rfind("events.out.tfevents.", 0), 0u) << name;
  const auto seconds = std::stoll(name.substr(std::strlen("events.out.tfevents.")));
  EXPECT_GE(seconds, static_cast<long long>(before));
  EXPECT_LE(seconds, static_cast<long long>(after));
  EXPECT_EQ(name.substr(name.size() - host_name().size() - 1), "." + host_name());

  const std::vector<TensorBoardEvent> events = read_tensorboard_events(writer.path());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_EQ(events[0].step, 0);
  EXPECT_GE(events[0].wall_time, before);
  EXPECT_LE(events[0].wall_time, after);
  EXPECT_TRUE(events[0].scalars.empty());
  EXPECT_TRUE(events[0].histograms.empty());
}

TEST_F(EventFileTest, ScalarsAndHistogramsReadBackAsWritten) {
  TensorBoardWriter writer(dir_);
  const TensorBoardHistogram histogram = sample_histogram();
  const std::vector<TaggedScalar> step_values = {
      {"train/lr", 3e-4}, {"train/grad_norm", 0.1}, {"quant/underflow", 0.0}};
  const double before = now_seconds();
  writer.scalar("train/loss", 10, 2.5);
  writer.scalars(20, step_values);
  writer.histogram("weights/h0.attn", 20, histogram);
  writer.flush();
  const double after = now_seconds();

  // Read while the writer is still open: flush() alone must make the records visible.
  const std::vector<TensorBoardEvent> events = read_tensorboard_events(writer.path());
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  for (std::size_t i = 1; i < events.size(); ++i) {
    EXPECT_TRUE(events[i].file_version.empty());
    EXPECT_GE(events[i].wall_time, before);
    EXPECT_LE(events[i].wall_time, after);
  }

  EXPECT_EQ(events[1].step, 10);
  ASSERT_EQ(events[1].scalars.size(), 1u);
  EXPECT_EQ(events[1].scalars[0].tag, "train/loss");
  EXPECT_EQ(events[1].scalars[0].value, 2.5f);

  EXPECT_EQ(events[2].step, 20);
  ASSERT_EQ(events[2].scalars.size(), step_values.size());
  for (std::size_t i = 0; i < step_values.size(); ++i) {
    EXPECT_EQ(events[2].scalars[i].tag, step_values[i].tag);
    EXPECT_EQ(events[2].scalars[i].value, static_cast<float>(step_values[i].value));
  }

  EXPECT_EQ(events[3].step, 20);
  ASSERT_EQ(events[3].histograms.size(), 1u);
  EXPECT_EQ(events[3].histograms[0].tag, "weights/h0.attn");
  const TensorBoardHistogram& read = events[3].histograms[0].histogram;
  EXPECT_EQ(read.right_edges, histogram.right_edges);
  EXPECT_EQ(read.counts, histogram.counts);
  EXPECT_EQ(read.min, histogram.min);
  EXPECT_EQ(read.max, histogram.max);
  EXPECT_EQ(read.num, histogram.num);
  EXPECT_EQ(read.sum, histogram.sum);
  EXPECT_EQ(read.sum_squares, histogram.sum_squares);
}

TEST_F(EventFileTest, ValuesThatAreNotFiniteFloatsAreSkipped) {
  TensorBoardWriter writer(dir_);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  writer.scalar("loss", 1, nan);
  writer.scalar("loss", 2, -inf);
  writer.scalar("loss", 3, 1e300);  // beyond float's range
  writer.scalars(4, std::vector<TaggedScalar>{{"a", nan}, {"b", inf}});
  writer.scalars(5, std::vector<TaggedScalar>{{"a", nan}, {"b", -7.0}, {"c", inf}});
  writer.flush();

  const std::vector<TensorBoardEvent> events = read_tensorboard_events(writer.path());
  ASSERT_EQ(events.size(), 2u) << "only the version record and step 5";
  EXPECT_EQ(events[1].step, 5);
  ASSERT_EQ(events[1].scalars.size(), 1u);
  EXPECT_EQ(events[1].scalars[0].tag, "b");
  EXPECT_EQ(events[1].scalars[0].value, -7.0f);
}

TEST_F(EventFileTest, MalformedHistogramIsRejectedBeforeWriting) {
  TensorBoardWriter writer(dir_);
  TensorBoardHistogram histogram = sample_histogram();
  histogram.counts.pop_back();
  EXPECT_THROW(writer.histogram("w", 1, histogram), std::invalid_argument);
  writer.flush();
  EXPECT_EQ(read_tensorboard_events(writer.path()).size(), 1u);
}

TEST_F(EventFileTest, MovedWriterKeepsWritingTheSameFile) {
  TensorBoardWriter first(dir_);
  const fs::path path = first.path();
  TensorBoardWriter second = std::move(first);
  second.scalar("loss", 1, 1.0);
  second.flush();
  EXPECT_EQ(second.path(), path);
  EXPECT_EQ(read_tensorboard_events(path).size(), 2u);
}

// ---- Independent checks of the bytes --------------------------------------------------------------

TEST_F(EventFileTest, FramingHasLittleEndianLengthsAndMaskedCrcs) {
  const std::vector<std::byte> bytes = file_bytes(small_event_file());
  const std::vector<HandRecord> records = split_by_hand(bytes);
  ASSERT_EQ(records.size(), 3u);
  for (const HandRecord& r : records) {
    EXPECT_EQ(little_endian(r.length_bytes), r.data.size());
    EXPECT_EQ(r.length_crc, io::masked_crc32c(r.length_bytes)) << "record at byte " << r.offset;
    EXPECT_EQ(r.data_crc, io::masked_crc32c(r.data)) << "record at byte " << r.offset;
  }
}

TEST_F(EventFileTest, VersionRecordDecodesByHand) {
  const std::vector<std::byte> bytes = file_bytes(small_event_file());
  const std::vector<WireField> event = wire_fields(split_by_hand(bytes).at(0).data);
  EXPECT_EQ(as_string(single(event, 3, 2).payload), "brain.Event:2");  // file_version
  EXPECT_GT(as_double(single(event, 1, 1).payload), 1.6e9);            // wall_time: after 2020
  EXPECT_TRUE(numbered(event, 2).empty()) << "step 0 is proto3's default, not written";
}

TEST_F(EventFileTest, ScalarsRecordDecodesByHand) {
  TensorBoardWriter writer(dir_);
  writer.scalars(7, std::vector<TaggedScalar>{{"loss", 2.5}, {"acc", 0.75}});
  writer.flush();
  const std::vector<std::byte> bytes = file_bytes(writer.path());

  const std::vector<WireField> event = wire_fields(split_by_hand(bytes).at(1).data);
  EXPECT_EQ(single(event, 2, 0).varint, 7u);  // step
  const std::vector<WireField> summary = wire_fields(single(event, 5, 2).payload);
  const std::vector<WireField> values = numbered(summary, 1);
  ASSERT_EQ(values.size(), 2u);
  const std::vector<WireField> loss = wire_fields(values[0].payload);
  EXPECT_EQ(as_string(single(loss, 1, 2).payload), "loss");  // tag
  EXPECT_EQ(as_float(single(loss, 2, 5).payload), 2.5f);     // simple_value
  const std::vector<WireField> acc = wire_fields(values[1].payload);
  EXPECT_EQ(as_string(single(acc, 1, 2).payload), "acc");
  EXPECT_EQ(as_float(single(acc, 2, 5).payload), 0.75f);
}

TEST_F(EventFileTest, HistogramRecordDecodesByHand) {
  const std::vector<std::byte> bytes = file_bytes(small_event_file());
  const TensorBoardHistogram expected = sample_histogram();

  const std::vector<WireField> event = wire_fields(split_by_hand(bytes).at(2).data);
  const std::vector<WireField> summary = wire_fields(single(event, 5, 2).payload);
  const std::vector<WireField> value = wire_fields(single(summary, 1, 2).payload);
  EXPECT_EQ(as_string(single(value, 1, 2).payload), "weights");
  const std::vector<WireField> histo = wire_fields(single(value, 5, 2).payload);
  EXPECT_EQ(as_double(single(histo, 1, 1).payload), expected.min);
  EXPECT_EQ(as_double(single(histo, 2, 1).payload), expected.max);
  EXPECT_EQ(as_double(single(histo, 3, 1).payload), expected.num);
  EXPECT_EQ(as_double(single(histo, 4, 1).payload), expected.sum);
  EXPECT_EQ(as_double(single(histo, 5, 1).payload), expected.sum_squares);
  // Packed: one length-delimited field of little-endian doubles, as TensorBoard's parser expects.
  EXPECT_EQ(packed_doubles(single(histo, 6, 2).payload), expected.right_edges);
  EXPECT_EQ(packed_doubles(single(histo, 7, 2).payload), expected.counts);
}

// ---- Damaged files --------------------------------------------------------------------------------

TEST_F(EventFileTest, FlippedDataByteNamesTheRecordAndItsOffset) {
  const fs::path path = small_event_file();
  std::vector<std::byte> bytes = file_bytes(path);
  const HandRecord scalar_record = split_by_hand(bytes).at(1);
  bytes[scalar_record.offset + 12 + 3] ^= std::byte{0x20};
  write_file(path, bytes);

  const std::string message = message_of<TensorBoardReadError>([&] { read_tensorboard_events(path); });
  EXPECT_TRUE(mentions(message, {path.string(), "record 1", "at byte " + std::to_string(scalar_record.offset),
                                 "CRC mismatch in the data"}));
}

TEST_F(EventFileTest, FlippedLengthByteFailsTheHeaderCrc) {
  const fs::path path = small_event_file();
  std::vector<std::byte> bytes = file_bytes(path);
  const HandRecord histogram_record = split_by_hand(bytes).at(2);
  bytes[histogram_record.offset] ^= std::byte{0x01};
  write_file(path, bytes);

  const std::string message = message_of<TensorBoardReadError>([&] { read_tensorboard_events(path); });
  EXPECT_TRUE(mentions(message, {path.string(), "record 2", "at byte " + std::to_string(histogram_record.offset),
                                 "CRC mismatch in the length header"}));
}

TEST_F(EventFileTest, FileCutInsideARecordIsReportedTruncated) {
  const fs::path path = small_event_file();
  const std::vector<std::byte> whole = file_bytes(path);
  const HandRecord last = split_by_hand(whole).at(2);
  // Cut inside the length header, the data, and the data's CRC.
  for (const std::size_t keep : {last.offset + 5, last.offset + 12 + last.data.size() / 2, whole.size() - 1}) {
    write_file(path, std::span(whole).first(keep));
    const std::string message = message_of<TensorBoardReadError>([&] { read_tensorboard_events(path); });
    EXPECT_TRUE(mentions(message, {path.string(), "record 2", "at byte " + std::to_string(last.offset), "truncated"}))
        << "file cut to " << keep << " bytes";
  }
}

TEST_F(EventFileTest, RecordThatIsNotAnEventIsReported) {
  const fs::path path = small_event_file();
  std::vector<std::byte> bytes = file_bytes(path);
  const std::size_t offset = bytes.size();
  // Eleven 0xFF bytes: a field key whose varint never ends.
  const std::vector<std::byte> garbage(11, std::byte{0xFF});
  const auto header = io::tfrecord_header(garbage.size());
  const auto footer = io::tfrecord_footer(garbage);
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), garbage.begin(), garbage.end());
  bytes.insert(bytes.end(), footer.begin(), footer.end());
  write_file(path, bytes);

  const std::string message = message_of<TensorBoardReadError>([&] { read_tensorboard_events(path); });
  EXPECT_TRUE(mentions(message, {path.string(), "record 3", "at byte " + std::to_string(offset), "does not parse"}));
}

// Found by fuzz/tensorboard_fuzzer.cpp (fuzz/corpus/tensorboard/regress_histogram_without_counts):
// a histogram with one edge and no count was returned as read.
TEST_F(EventFileTest, HistogramWithoutACountPerEdgeIsReported) {
  const fs::path path = small_event_file();
  std::vector<std::byte> bytes = file_bytes(path);
  const std::size_t offset = bytes.size();
  // Event{step: 1, summary{value{tag: "h", histo{bucket_limit: [1.0]}}}}, encoded by hand.
  const std::vector<std::uint8_t> event = {0x10, 0x01, 0x2a, 0x11, 0x0a, 0x0f, 0x0a, 0x01, 'h', 0x2a, 0x0a,
                                           0x32, 0x08, 0,    0,    0,    0,    0,    0,    0xf0, 0x3f};
  const auto data = std::as_bytes(std::span(event));
  const auto header = io::tfrecord_header(data.size());
  const auto footer = io::tfrecord_footer(data);
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  bytes.insert(bytes.end(), footer.begin(), footer.end());
  write_file(path, bytes);

  const std::string message = message_of<TensorBoardReadError>([&] { read_tensorboard_events(path); });
  EXPECT_TRUE(mentions(message, {path.string(), "record 3", "at byte " + std::to_string(offset), "histogram 'h'",
                                 "0 counts for 1 bucket edges"}));
}

TEST_F(EventFileTest, MissingFileIsReportedWithItsPath) {
  const fs::path path = dir_ / "events.out.tfevents.0.nowhere";
  const std::string message = message_of<TensorBoardReadError>([&] { read_tensorboard_events(path); });
  EXPECT_TRUE(mentions(message, {path.string(), std::strerror(ENOENT)}));
}

TEST_F(EventFileTest, EmptyFileHasNoEvents) {
  write_file(dir_ / "empty", {});
  EXPECT_TRUE(read_tensorboard_events(dir_ / "empty").empty());
}

TEST_F(EventFileTest, RunDirectoryThatCannotBeCreatedIsReported) {
  write_file(dir_ / "plain_file", {});
  const fs::path run_dir = dir_ / "plain_file" / "run";
  const std::string message = message_of<TensorBoardWriteError>([&] { TensorBoardWriter writer(run_dir); });
  EXPECT_TRUE(mentions(message, {run_dir.string()}));
}

// ---- Several writers ------------------------------------------------------------------------------

TEST_F(EventFileTest, TwoWritersInOneDirectoryMakeTwoFiles) {
  TensorBoardWriter first(dir_);
  TensorBoardWriter second(dir_);
  EXPECT_NE(first.path(), second.path());
  first.scalar("run", 1, 1.0);
  second.scalar("run", 1, 2.0);
  first.flush();
  second.flush();
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);
  EXPECT_EQ(read_tensorboard_events(first.path()).at(1).scalars.at(0).value, 1.0f);
  EXPECT_EQ(read_tensorboard_events(second.path()).at(1).scalars.at(0).value, 2.0f);
}

TEST_F(EventFileTest, ExistingFileOfTheSameNameIsNotOverwritten) {
  // Occupy the names of this second and the next few, as a run resumed within them would find.
  const auto now = static_cast<long long>(now_seconds());
  const std::vector<std::byte> sentinel(5, std::byte{0x5A});
  std::vector<std::string> taken;
  for (long long s = now; s < now + 10; ++s) {
    taken.push_back("events.out.tfevents." + std::to_string(s) + "." + host_name());
    write_file(dir_ / taken.back(), sentinel);
  }

  TensorBoardWriter writer(dir_);
  const std::string name = writer.path().filename().string();
  bool is_suffixed = false;
  for (const std::string& t : taken) is_suffixed = is_suffixed || name == t + ".1";
  EXPECT_TRUE(is_suffixed) << name;
  for (const std::string& t : taken) EXPECT_EQ(file_bytes(dir_ / t), sentinel) << t;
}

}  // namespace
}  // namespace altgrad::io_test
