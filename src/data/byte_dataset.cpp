#include "data/byte_dataset.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "data/corpus.hpp"
#include "format/philox.hpp"
#include "format/philox_key.hpp"

namespace altgrad::data {
namespace {

constexpr std::uint64_t kMaxStep = std::uint64_t{1} << 62;  // the top two stream bits hold split and purpose

std::string shortest(double value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return {text, end};
}

std::size_t validation_size(std::size_t total, double val_fraction) {
  if (!(val_fraction > 0.0 && val_fraction < 1.0)) {
    throw std::invalid_argument("val_fraction = " + shortest(val_fraction) + " is outside (0, 1)");
  }
  return static_cast<std::size_t>(std::llround(static_cast<double>(total) * val_fraction));
}

void require_room(const DatasetOptions& options, std::size_t train, std::size_t val) {
  if (options.block_size < 1) throw std::invalid_argument("block_size must be positive");
  const auto needed = static_cast<std::size_t>(options.block_size) + 2;
  if (train >= needed && val >= needed) return;
  throw DataError(options.source + ": corpus too short for block_size = " + std::to_string(options.block_size) +
                  ": the train split has " + std::to_string(train) + " bytes and the validation split (val_fraction = " +
                  shortest(options.val_fraction) + ") has " + std::to_string(val) + "; each needs at least " +
                  std::to_string(needed) + " (block_size + 2)");
}

// Philox stream and counter for a key: stream = step with split and purpose in its top bits;
// counter = (micro-step, row pair), under the run's batch-sampling key (format/philox_key.hpp).
// Every (seed, key, row) gets its own Philox block words.
std::uint64_t stream_of(const BatchKey& key) {
  return key.step | (std::uint64_t{static_cast<std::uint8_t>(key.split)} << 62) |
         (std::uint64_t{static_cast<std::uint8_t>(key.purpose)} << 63);
}

// Uniform in [0, windows): 64 random bits modulo `windows`; the bias, at most windows / 2^64, is
// far below anything a training run could detect.
std::size_t window_offset(std::uint64_t philox_key, const BatchKey& key, std::size_t row, std::size_t windows) {
  const std::uint64_t group = (std::uint64_t{key.micro_step} << 32) | (row / 2);
  const auto words = format::philox_block(philox_key, stream_of(key), group);
  const std::size_t half = 2 * (row % 2);
  const std::uint64_t bits = words[half] | (std::uint64_t{words[half + 1]} << 32);
  return static_cast<std::size_t>(bits % windows);
}

void copy_window(const std::uint8_t* window, int T, std::int32_t* x, std::int32_t* y) {
  for (int t = 0; t < T; ++t) {
    x[t] = window[t];
    y[t] = window[t + 1];
  }
}

void check_batch_arguments(std::size_t split_size, int B, int T, std::size_t x_size, std::size_t y_size,
                           std::uint64_t step) {
  if (B < 1 || T < 1) throw std::invalid_argument("get_batch: B and T must be positive");
  const auto elements = static_cast<std::size_t>(B) * static_cast<std::size_t>(T);
  if (x_size != elements || y_size != elements) {
    throw std::invalid_argument("get_batch: x and y must hold B·T = " + std::to_string(elements) + " tokens");
  }
  if (split_size < static_cast<std::size_t>(T) + 1) {
    throw std::invalid_argument("get_batch: T = " + std::to_string(T) + " needs a split of at least T + 1 bytes, this one has " +
                                std::to_string(split_size));
  }
  if (step >= kMaxStep) throw std::invalid_argument("get_batch: step must be below 2^62");
}

}  // namespace

ByteDataset::ByteDataset(std::string bytes, DatasetOptions options)
    : bytes_(std::move(bytes)), train_size_(0), options_(std::move(options)) {
  const std::size_t val = validation_size(bytes_.size(), options_.val_fraction);
  train_size_ = bytes_.size() - val;
  require_room(options_, train_size_, val);
}

std::span<const std::uint8_t> ByteDataset::split(Split which) const {
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes_.data());
  const std::span<const std::uint8_t> all(data, bytes_.size());
  return which == Split::train ? all.first(train_size_) : all.subspan(train_size_);
}

void ByteDataset::get_batch(const BatchKey& key, int B, int T, std::span<std::int32_t> x,
                            std::span<std::int32_t> y) const {
  const auto text = split(key.split);
  check_batch_arguments(text.size(), B, T, x.size(), y.size(), key.step);
  const std::size_t windows = text.size() - static_cast<std::size_t>(T);  // offsets 0 .. size - T - 1
  const std::uint64_t philox_key = format::philox_key(options_.seed, format::RandomPurpose::batch_sampling);
  for (std::size_t row = 0; row < static_cast<std::size_t>(B); ++row) {
    const std::size_t offset = window_offset(philox_key, key, row, windows);
    const std::size_t out = row * static_cast<std::size_t>(T);
    copy_window(text.data() + offset, T, x.data() + out, y.data() + out);
  }
}

TokenWindows ByteDataset::consecutive_windows(Split which, int T, std::size_t max_windows) const {
  return data::consecutive_windows(split(which), T, max_windows);
}

TokenWindows consecutive_windows(std::span<const std::uint8_t> text, int T, std::size_t max_windows) {
  if (T < 1) throw std::invalid_argument("consecutive_windows: T must be positive");
  const auto stride = static_cast<std::size_t>(T) + 1;
  TokenWindows windows;
  windows.T = T;
  windows.count = std::min(max_windows, text.size() / stride);
  windows.x.resize(windows.count * static_cast<std::size_t>(T));
  windows.y.resize(windows.x.size());
  for (std::size_t w = 0; w < windows.count; ++w) {
    const std::size_t out = w * static_cast<std::size_t>(T);
    copy_window(text.data() + w * stride, T, windows.x.data() + out, windows.y.data() + out);
  }
  return windows;
}

}  // namespace altgrad::data
