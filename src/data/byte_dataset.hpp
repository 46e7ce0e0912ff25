#pragma once
// A corpus split into training and validation bytes, and the batches drawn from it.
//
// Split: the last val_fraction of the bytes is validation, as in nanoGPT's prepare scripts, so
// the split depends only on the bytes and the fraction.
//
// Batches: each row is a window of T+1 consecutive bytes at a random offset; x is its first T
// bytes, y its last T (the next byte at every position). The offsets come from Philox keyed by
// (seed, purpose, split, step, micro-step, row), not from a generator that advances: the batch of
// step N is the same whatever ran before it, so a resumed run sees bit-identical batches without
// saving any generator state, and evaluation (its own purpose) can never shift training batches.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace altgrad::data {

enum class Split : std::uint8_t { train = 0, val = 1 };

enum class BatchPurpose : std::uint8_t { training = 0, evaluation = 1 };

// Which batch to draw. Distinct keys give independent batches.
struct BatchKey {
  BatchPurpose purpose = BatchPurpose::training;
  Split split = Split::train;
  std::uint64_t step = 0;        // optimizer step (training) or evaluation batch index; < 2^62
  std::uint32_t micro_step = 0;  // gradient-accumulation micro-step within the step

  static BatchKey training(std::uint64_t step, std::uint32_t micro_step = 0) {
    return {BatchPurpose::training, Split::train, step, micro_step};
  }
  // Batch `index` of an evaluation. The same indices at every evaluation give the same windows, so
  // an eval curve measures the model, not sampling noise, and runs sharing a seed are evaluated on
  // identical text.
  static BatchKey evaluation(Split split, std::uint64_t index) { return {BatchPurpose::evaluation, split, index, 0}; }
};

// Non-overlapping windows of T+1 bytes from the start of `text`: window w covers bytes
// [w·(T+1), (w+1)·(T+1)), x is its first T bytes and y its last T. At most max_windows windows,
// fewer when the text runs out (a partial window at the end is dropped). For evaluating a text
// from its beginning, deterministically, with no window seen twice.
struct TokenWindows {
  std::size_t count = 0;
  int T = 0;
  std::vector<std::int32_t> x, y;  // (count, T) row-major
};
TokenWindows consecutive_windows(std::span<const std::uint8_t> text, int T, std::size_t max_windows);

struct DatasetOptions {
  double val_fraction = 0.1;  // in (0, 1)
  int block_size = 1;         // each split must hold at least block_size + 2 bytes
  std::uint64_t seed = 0;
  std::string source;         // the corpus path, for error messages
};

class ByteDataset {
 public:
  // Splits `bytes`; the validation part is the last round(size · val_fraction) bytes. Throws
  // DataError (naming the source, the split sizes and block_size) when either split is shorter
  // than block_size + 2 bytes, so that every split offers at least two distinct windows.
  ByteDataset(std::string bytes, DatasetOptions options);

  std::span<const std::uint8_t> split(Split which) const;
  const DatasetOptions& options() const { return options_; }

  // Fills x and y, both (B, T) row-major, with tokens 0..255. Throws std::invalid_argument when
  // the spans are not B·T long, B or T is not positive, or the split is shorter than T + 1 bytes.
  void get_batch(const BatchKey& key, int B, int T, std::span<std::int32_t> x, std::span<std::int32_t> y) const;

  // consecutive_windows over one split, from its first byte.
  TokenWindows consecutive_windows(Split which, int T, std::size_t max_windows) const;

 private:
  std::string bytes_;
  std::size_t train_size_;
  DatasetOptions options_;
};

}  // namespace altgrad::data
