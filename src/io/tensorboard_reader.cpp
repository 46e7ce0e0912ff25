#include "io/tensorboard_reader.hpp"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <stdexcept>

#include "io/c_file.hpp"
#include "io/tensorboard_event.pb.h"
#include "io/tfrecord.hpp"

namespace altgrad::io {
namespace {

namespace proto = altgrad::tensorboard;

[[noreturn]] void throw_read_error(const char* action, const std::filesystem::path& path, int error) {
  throw TensorBoardReadError("TensorBoard event file: " + os_error_message(action, path, error));
}

std::vector<std::byte> read_whole_file(const std::filesystem::path& path) {
  const FileHandle file(std::fopen(path.c_str(), "rb"));
  if (!file) throw_read_error("open", path, errno);
  std::vector<std::byte> bytes;
  std::byte chunk[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) bytes.insert(bytes.end(), chunk, chunk + got);
  if (std::ferror(file.get())) throw_read_error("read", path, errno);
  return bytes;
}

std::vector<TfRecord> split_records(std::span<const std::byte> bytes, const std::filesystem::path& path) {
  try {
    return split_tfrecords(bytes);
  } catch (const TfRecordError& error) {
    throw TensorBoardReadError("TensorBoard event file " + path.string() + ": " + error.what());
  }
}

proto::Event parse_event(const TfRecord& record, std::size_t index, const std::filesystem::path& path) {
  proto::Event event;
  // ParseFromArray takes an int size; a record past INT_MAX bytes is not one this writer made.
  if (record.data.size() > INT_MAX || !event.ParseFromArray(record.data.data(), static_cast<int>(record.data.size())))
    throw TensorBoardReadError("TensorBoard event file " + path.string() + ": " +
                               tfrecord_location(index, record.offset) + ": data does not parse as an Event");
  return event;
}

TensorBoardHistogram histogram_from(const proto::HistogramProto& from) {
  TensorBoardHistogram h;
  h.right_edges.assign(from.bucket_limit().begin(), from.bucket_limit().end());
  h.counts.assign(from.bucket().begin(), from.bucket().end());
  h.min = from.min();
  h.max = from.max();
  h.num = from.num();
  h.sum = from.sum();
  h.sum_squares = from.sum_squares();
  return h;
}

void add_value(const proto::Summary::Value& value, TensorBoardEvent& to) {
  if (value.has_simple_value()) to.scalars.push_back({value.tag(), value.simple_value()});
  if (value.has_histo()) to.histograms.push_back({value.tag(), histogram_from(value.histo())});
}

TensorBoardEvent event_from(const proto::Event& from) {
  TensorBoardEvent event;
  event.wall_time = from.wall_time();
  event.step = from.step();
  if (from.has_file_version()) event.file_version = from.file_version();
  if (from.has_summary())
    for (const proto::Summary::Value& value : from.summary().value()) add_value(value, event);
  return event;
}

// A histogram TensorBoard could not draw (edges not increasing, a count per edge missing) is a
// malformed record, refused here so that no reader of the result has to check it again.
void check_histograms(const TensorBoardEvent& event, std::size_t index, const TfRecord& record,
                      const std::filesystem::path& path) {
  for (const EventHistogram& h : event.histograms) {
    try {
      check_tensorboard_histogram(h.histogram);
    } catch (const std::invalid_argument& e) {
      throw TensorBoardReadError("TensorBoard event file " + path.string() + ": " + tfrecord_location(index, record.offset) +
                                 ": histogram '" + h.tag + "': " + e.what());
    }
  }
}

}  // namespace

std::vector<TensorBoardEvent> read_tensorboard_events(const std::filesystem::path& file) {
  const std::vector<std::byte> bytes = read_whole_file(file);
  const std::vector<TfRecord> records = split_records(bytes, file);
  std::vector<TensorBoardEvent> events;
  events.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    events.push_back(event_from(parse_event(records[i], i, file)));
    check_histograms(events.back(), i, records[i], file);
  }
  return events;
}

}  // namespace altgrad::io
