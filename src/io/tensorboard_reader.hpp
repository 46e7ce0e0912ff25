#pragma once
// Reads a TensorBoard event file back: every record's framing and both CRCs are checked
// (tfrecord.hpp), and each record is parsed as an Event (tensorboard_event.proto). For tests, and
// for reports that read a run's directory.
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/tensorboard_histogram.hpp"

namespace altgrad::io {

// The file cannot be read, or is not a well-formed event file. The message names the file and,
// for a malformed record, its index (from 0, as in the returned vector) and its starting byte.
class TensorBoardReadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EventScalar {
  std::string tag;
  float value = 0;
};

struct EventHistogram {
  std::string tag;
  TensorBoardHistogram histogram;
};

// One record. A version record has file_version set and nothing else; a summary record has
// scalars and histograms, in the order they were written.
struct TensorBoardEvent {
  double wall_time = 0;  // seconds since the Unix epoch
  std::int64_t step = 0;
  std::string file_version;
  std::vector<EventScalar> scalars;
  std::vector<EventHistogram> histograms;
};

// Every event in the file, in order. Summary values of other kinds (images, audio, tensors) are
// skipped. Throws TensorBoardReadError for a missing or unreadable file, a record cut short, a CRC
// mismatch, data that does not parse as an Event, or a histogram that check_tensorboard_histogram
// refuses.
std::vector<TensorBoardEvent> read_tensorboard_events(const std::filesystem::path& file);

}  // namespace altgrad::io
