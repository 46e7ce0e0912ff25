#include "io/tensorboard_writer.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <system_error>

#include "io/c_file.hpp"
#include "io/tensorboard_event.pb.h"
#include "io/tfrecord.hpp"

namespace altgrad::io {
namespace {

namespace proto = altgrad::tensorboard;

constexpr const char* kFileVersion = "brain.Event:2";
constexpr std::size_t kBufferBytes = 1 << 16;
// Distinct names tried for one second's file before giving up: far more than runs that can start
// in one directory within one second.
constexpr int kMaxNameSuffix = 1000;

[[noreturn]] void throw_write_error(const char* action, const std::filesystem::path& path, int error) {
  throw TensorBoardWriteError("TensorBoard event file: " + os_error_message(action, path, error));
}

double seconds_since_epoch() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string event_file_name(std::int64_t unix_seconds, int suffix) {
  std::string name = "events.out.tfevents." + std::to_string(unix_seconds) + "." + host_name();
  if (suffix > 0) name += "." + std::to_string(suffix);
  return name;
}

// Opens a file that did not exist before ("x": fopen fails with EEXIST otherwise), so two writers
// racing for one name never share a file. Null when the name is taken.
FileHandle create_new_file(const std::filesystem::path& path) {
  if (std::FILE* file = std::fopen(path.c_str(), "wbx")) return FileHandle(file);
  if (errno != EEXIST) throw_write_error("create", path, errno);
  return nullptr;
}

void create_run_dir(const std::filesystem::path& run_dir) {
  std::error_code error;
  std::filesystem::create_directories(run_dir, error);
  if (error)
    throw TensorBoardWriteError("TensorBoard event file: cannot create directory " + run_dir.string() + ": " +
                                error.message());
}

// The values simple_value can hold: finite, and within float's range, so the conversion neither
// overflows to infinity nor is undefined.
bool fits_simple_value(double value) { return std::abs(value) <= std::numeric_limits<float>::max(); }

bool any_fits_simple_value(std::span<const TaggedScalar> values) {
  for (const TaggedScalar& v : values)
    if (fits_simple_value(v.value)) return true;
  return false;
}

proto::Event event_at(std::int64_t step) {
  proto::Event event;
  event.set_wall_time(seconds_since_epoch());
  event.set_step(step);
  return event;
}

void fill_histogram(const TensorBoardHistogram& from, proto::HistogramProto& to) {
  to.set_min(from.min);
  to.set_max(from.max);
  to.set_num(from.num);
  to.set_sum(from.sum);
  to.set_sum_squares(from.sum_squares);
  to.mutable_bucket_limit()->Add(from.right_edges.begin(), from.right_edges.end());
  to.mutable_bucket()->Add(from.counts.begin(), from.counts.end());
}

}  // namespace

struct TensorBoardWriter::OpenFile {
  std::filesystem::path path;
  FileHandle handle;
  std::string serialized;  // reused, so its capacity is allocated once

  explicit OpenFile(const std::filesystem::path& run_dir) {
    const auto unix_seconds = static_cast<std::int64_t>(std::floor(seconds_since_epoch()));
    for (int suffix = 0; suffix <= kMaxNameSuffix && !handle; ++suffix) {
      path = run_dir / event_file_name(unix_seconds, suffix);
      handle = create_new_file(path);
    }
    if (!handle) throw_write_error("create", path, EEXIST);
    // Full buffering with a larger buffer than stdio's default: a logged step is a few kilobytes.
    std::setvbuf(handle.get(), nullptr, _IOFBF, kBufferBytes);
  }

  void write_bytes(std::span<const std::byte> bytes) {
    if (std::fwrite(bytes.data(), 1, bytes.size(), handle.get()) != bytes.size()) throw_write_error("write", path, errno);
  }

  void write_record(const proto::Event& event) {
    if (!event.SerializeToString(&serialized))
      throw TensorBoardWriteError("TensorBoard event file " + path.string() + ": cannot serialize an Event");
    const auto data = std::as_bytes(std::span(serialized));
    write_bytes(tfrecord_header(data.size()));
    write_bytes(data);
    write_bytes(tfrecord_footer(data));
  }
};

TensorBoardWriter::TensorBoardWriter(const std::filesystem::path& run_dir) {
  create_run_dir(run_dir);
  file_ = std::make_unique<OpenFile>(run_dir);
  proto::Event version = event_at(0);
  version.set_file_version(kFileVersion);
  file_->write_record(version);
  flush();
}

TensorBoardWriter::~TensorBoardWriter() = default;
TensorBoardWriter::TensorBoardWriter(TensorBoardWriter&&) noexcept = default;
TensorBoardWriter& TensorBoardWriter::operator=(TensorBoardWriter&&) noexcept = default;

const std::filesystem::path& TensorBoardWriter::path() const { return file_->path; }

void TensorBoardWriter::scalar(std::string_view tag, std::int64_t step, double value) {
  const TaggedScalar one{tag, value};
  scalars(step, std::span(&one, 1));
}

void TensorBoardWriter::scalars(std::int64_t step, std::span<const TaggedScalar> values) {
  if (!any_fits_simple_value(values)) return;
  proto::Event event = event_at(step);
  proto::Summary& summary = *event.mutable_summary();
  for (const TaggedScalar& v : values) {
    if (!fits_simple_value(v.value)) continue;
    proto::Summary::Value& out = *summary.add_value();
    out.mutable_tag()->assign(v.tag);
    out.set_simple_value(static_cast<float>(v.value));
  }
  file_->write_record(event);
}

void TensorBoardWriter::histogram(std::string_view tag, std::int64_t step, const TensorBoardHistogram& histogram) {
  check_tensorboard_histogram(histogram);
  proto::Event event = event_at(step);
  proto::Summary::Value& out = *event.mutable_summary()->add_value();
  out.mutable_tag()->assign(tag);
  fill_histogram(histogram, *out.mutable_histo());
  file_->write_record(event);
}

void TensorBoardWriter::flush() {
  if (std::fflush(file_->handle.get()) != 0) throw_write_error("write", file_->path, errno);
}

}  // namespace altgrad::io
