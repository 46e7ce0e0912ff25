#pragma once
// Writes a run's TensorBoard event file: <run_dir>/events.out.tfevents.<unix seconds>.<hostname>,
// a TFRecord stream (tfrecord.hpp) of serialized Events (tensorboard_event.proto). The first record
// is the version record, file_version = "brain.Event:2"; each later one holds a Summary of scalars
// or histograms for one step, stamped with the wall time (seconds since the Unix epoch).
//
// Records are buffered; flush() hands them to the operating system, where TensorBoard can read them.
// Call it at each logging step so a crashed run keeps what it logged.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <stdexcept>
#include <string_view>

#include "io/tensorboard_histogram.hpp"

namespace altgrad::io {

// Cannot create or write the event file; the message names the file and the operating system's
// reason.
class TensorBoardWriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TaggedScalar {
  std::string_view tag;
  double value;
};

class TensorBoardWriter {
 public:
  // Creates run_dir if it is missing and a new event file in it, then writes the version record.
  // An existing file is never overwritten: if the name is taken (a resumed run starting within the
  // same second, say) the writer appends .1, .2, … to it.
  explicit TensorBoardWriter(const std::filesystem::path& run_dir);

  // Flushes and closes. A failure there cannot be reported; call flush() first to see it.
  ~TensorBoardWriter();

  // A moved-from writer may only be destroyed or assigned to.
  TensorBoardWriter(TensorBoardWriter&&) noexcept;
  TensorBoardWriter& operator=(TensorBoardWriter&&) noexcept;
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  const std::filesystem::path& path() const;

  // One Event holding one value, stored as a float (TensorBoard's simple_value). A value that is NaN,
  // infinite or beyond float's range is skipped, writing nothing: TensorBoard's charts have no place
  // for it.
  void scalar(std::string_view tag, std::int64_t step, double value);

  // One Event holding every value of one step, with the same rules as scalar(); much smaller than
  // one Event per value. Nothing is written when every value is skipped.
  void scalars(std::int64_t step, std::span<const TaggedScalar> values);

  // Throws std::invalid_argument for a histogram check_tensorboard_histogram rejects.
  void histogram(std::string_view tag, std::int64_t step, const TensorBoardHistogram& histogram);

  void flush();

 private:
  struct OpenFile;
  std::unique_ptr<OpenFile> file_;
};

}  // namespace altgrad::io
