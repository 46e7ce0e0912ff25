// The train/val split and the batches: windows of the right split, y one byte ahead of x, the same
// batch for the same (seed, key) whatever ran before, different batches for different keys, every
// window reachable, and consecutive evaluation windows.
#include "data/byte_dataset.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/corpus.hpp"
#include "support/error_message.hpp"

namespace {

using altgrad::data::BatchKey;
using altgrad::data::BatchPurpose;
using altgrad::data::ByteDataset;
using altgrad::data::consecutive_windows;
using altgrad::data::DataError;
using altgrad::data::DatasetOptions;
using altgrad::data::Split;
using altgrad::test_support::mentions;
using altgrad::test_support::message_of;

// Random bytes (all 256 values): windows of 16+ bytes are unique, so a window's offset can be found
// by searching for it.
std::string random_bytes(std::size_t size, unsigned seed) {
  std::mt19937 generator(seed);
  std::string bytes(size, '\0');
  for (auto& b : bytes) b = static_cast<char>(generator() & 0xFF);
  return bytes;
}

ByteDataset dataset(std::string bytes, std::uint64_t seed = 7, int block_size = 16, double val_fraction = 0.1) {
  return ByteDataset(std::move(bytes), DatasetOptions{val_fraction, block_size, seed, "test corpus"});
}

struct Batch {
  std::vector<std::int32_t> x, y;
  bool operator==(const Batch&) const = default;
};

Batch draw(const ByteDataset& data, const BatchKey& key, int B, int T) {
  Batch batch{std::vector<std::int32_t>(static_cast<std::size_t>(B * T)), std::vector<std::int32_t>(static_cast<std::size_t>(B * T))};
  data.get_batch(key, B, T, batch.x, batch.y);
  return batch;
}

// Where row `row` of the batch starts in `text`; fails the test unless the row is a window of
// text (x = text[o, o+T), y = text[o+1, o+T+1)) with tokens 0..255.
std::size_t offset_of_row(std::span<const std::uint8_t> text, const Batch& batch, int row, int T) {
  std::vector<std::uint8_t> window;
  for (int t = 0; t < T; ++t) {
    const std::int32_t token = batch.x[static_cast<std::size_t>(row * T + t)];
    EXPECT_TRUE(token >= 0 && token <= 255) << "token " << token;
    window.push_back(static_cast<std::uint8_t>(token));
    if (t + 1 < T) {
      EXPECT_EQ(batch.y[static_cast<std::size_t>(row * T + t)], batch.x[static_cast<std::size_t>(row * T + t + 1)]);
    }
  }
  window.push_back(static_cast<std::uint8_t>(batch.y[static_cast<std::size_t>(row * T + T - 1)]));
  const auto found = std::search(text.begin(), text.end(), window.begin(), window.end());
  EXPECT_NE(found, text.end()) << "row " << row << " is not a window of the split";
  return static_cast<std::size_t>(found - text.begin());
}

TEST(ByteDatasetSplit, LastTenthIsValidation) {
  std::string bytes;
  for (int i = 0; i < 100; ++i) bytes += "0123456789";
  const auto data = dataset(bytes);
  ASSERT_EQ(data.split(Split::train).size(), 900u);
  ASSERT_EQ(data.split(Split::val).size(), 100u);
  EXPECT_EQ(std::string(data.split(Split::train).begin(), data.split(Split::train).end()), bytes.substr(0, 900));
  EXPECT_EQ(std::string(data.split(Split::val).begin(), data.split(Split::val).end()), bytes.substr(900));
}

TEST(ByteDatasetSplit, RoundsTheValidationShareToWholeBytes) {
  const auto data = dataset(random_bytes(1234, 1), 7, 16, 0.1);  // 123.4 bytes → 123
  EXPECT_EQ(data.split(Split::val).size(), 123u);
  EXPECT_EQ(data.split(Split::train).size(), 1111u);
  EXPECT_EQ(dataset(random_bytes(1236, 1), 7, 16, 0.1).split(Split::val).size(), 124u);  // 123.6 → 124
  const auto quarter = dataset(random_bytes(1000, 1), 7, 16, 0.25);
  EXPECT_EQ(quarter.split(Split::val).size(), 250u);
}

TEST(ByteDatasetSplit, IsDisjointCompleteAndDeterministic) {
  const std::string bytes = random_bytes(5000, 2);
  const auto a = dataset(bytes, 1), b = dataset(bytes, 99);
  const auto train = a.split(Split::train), val = a.split(Split::val);
  EXPECT_EQ(train.size() + val.size(), bytes.size());
  EXPECT_EQ(train.data() + train.size(), val.data());  // adjacent, so no byte is in both
  EXPECT_TRUE(std::equal(train.begin(), train.end(), b.split(Split::train).begin(), b.split(Split::train).end()));
  EXPECT_TRUE(std::equal(val.begin(), val.end(), b.split(Split::val).begin(), b.split(Split::val).end()));
}

TEST(ByteDatasetSplit, EachSplitNeedsBlockSizePlusTwoBytes) {
  // 100 bytes at val_fraction 0.1: 90 train, 10 validation; block_size 8 needs 10 in each.
  EXPECT_NO_THROW(dataset(random_bytes(100, 3), 7, 8));
  const auto message = message_of<DataError>([] { dataset(random_bytes(100, 3), 7, 9); });
  EXPECT_TRUE(mentions(message, {"test corpus", "block_size = 9", "10", "11"}));
  // The train split can be the short one too.
  EXPECT_TRUE(mentions(message_of<DataError>([] { dataset(random_bytes(100, 3), 7, 30, 0.75); }),
                       {"test corpus", "block_size = 30", "25"}));
}

TEST(ByteDatasetBatches, RowsAreWindowsOfTheRequestedSplitWithYOneAhead) {
  const auto data = dataset(random_bytes(20000, 4));
  constexpr int B = 8, T = 16;
  for (const Split split : {Split::train, Split::val}) {
    const Batch batch = draw(data, {BatchPurpose::training, split, 3, 0}, B, T);
    const auto text = data.split(split);
    for (int row = 0; row < B; ++row) EXPECT_LE(offset_of_row(text, batch, row, T) + T + 1, text.size());
  }
}

TEST(ByteDatasetBatches, BytesAbove127BecomeTokens128To255) {
  const auto data = dataset(std::string(200, '\xE9'));  // é's second byte, alone: token 233
  const Batch batch = draw(data, BatchKey::training(0), 2, 4);
  EXPECT_EQ(batch.x, std::vector<std::int32_t>(8, 233));
  EXPECT_EQ(batch.y, std::vector<std::int32_t>(8, 233));
}

TEST(ByteDatasetBatches, SameKeySameBatchWhateverRanBefore) {
  const std::string bytes = random_bytes(20000, 5);
  const auto first = dataset(bytes, 11);
  const Batch step7 = draw(first, BatchKey::training(7), 4, 16);
  for (std::uint64_t step = 0; step < 7; ++step) draw(first, BatchKey::training(step), 4, 16);
  draw(first, BatchKey::evaluation(Split::val, 0), 4, 16);
  EXPECT_EQ(draw(first, BatchKey::training(7), 4, 16), step7);
  const auto resumed = dataset(bytes, 11);  // a fresh process resuming at step 7
  EXPECT_EQ(draw(resumed, BatchKey::training(7), 4, 16), step7);
}

TEST(ByteDatasetBatches, DifferentKeysAndSeedsGiveDifferentBatches) {
  const std::string bytes = random_bytes(20000, 6);
  const auto data = dataset(bytes, 11);
  const Batch base = draw(data, BatchKey::training(5), 4, 16);
  EXPECT_NE(draw(data, BatchKey::training(6), 4, 16), base);
  EXPECT_NE(draw(data, BatchKey::training(5, 1), 4, 16), base);  // next micro-step
  EXPECT_NE(draw(data, {BatchPurpose::evaluation, Split::train, 5, 0}, 4, 16), base);
  EXPECT_NE(draw(dataset(bytes, 12), BatchKey::training(5), 4, 16), base);
  // Rows of one batch are drawn independently.
  const Batch wide = draw(data, BatchKey::training(0), 8, 16);
  EXPECT_FALSE(std::equal(wide.x.begin(), wide.x.begin() + 16, wide.x.begin() + 16));
}

TEST(ByteDatasetBatches, EveryWindowIsReachableAndNoneMore) {
  // Train split of 24 bytes with T = 16: exactly 8 windows, offsets 0..7.
  const std::string bytes = random_bytes(48, 7);
  const auto data = ByteDataset(bytes, DatasetOptions{0.5, 16, 3, "small"});
  const auto text = data.split(Split::train);
  ASSERT_EQ(text.size(), 24u);
  std::map<std::size_t, int> counts;
  constexpr int B = 64, steps = 50;
  for (int step = 0; step < steps; ++step) {
    const Batch batch = draw(data, BatchKey::training(static_cast<std::uint64_t>(step)), B, 16);
    for (int row = 0; row < B; ++row) ++counts[offset_of_row(text, batch, row, 16)];
  }
  ASSERT_EQ(counts.size(), 8u);
  EXPECT_EQ(counts.rbegin()->first, 7u);  // the last window, ending at the split's last byte
  for (const auto& [offset, count] : counts) {
    // 3,200 draws over 8 offsets: 400 expected, standard deviation ≈ 19.
    EXPECT_GT(count, 300) << "offset " << offset;
    EXPECT_LT(count, 500) << "offset " << offset;
  }
}

TEST(ByteDatasetBatches, RejectsBadArguments) {
  const auto data = dataset(random_bytes(1000, 8));
  std::vector<std::int32_t> x(64), y(64), short_y(63);
  EXPECT_THROW(data.get_batch(BatchKey::training(0), 4, 16, x, short_y), std::invalid_argument);
  EXPECT_THROW(data.get_batch(BatchKey::training(0), 0, 16, x, y), std::invalid_argument);
  std::vector<std::int32_t> long_x(100 * 2), long_y(100 * 2);
  EXPECT_THROW(data.get_batch(BatchKey::evaluation(Split::val, 0), 2, 100, long_x, long_y), std::invalid_argument);
  EXPECT_NO_THROW(data.get_batch(BatchKey::evaluation(Split::val, 0), 2, 99, std::span(long_x).first(198),
                                 std::span(long_y).first(198)));
}

TEST(ConsecutiveWindows, CutsTheTextIntoWindowsOfTPlusOneBytes) {
  const std::string text = "abcdefghij";
  const auto bytes = std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  const auto windows = consecutive_windows(bytes, 2, 100);
  ASSERT_EQ(windows.count, 3u);  // abc def ghi; the lone j is dropped
  EXPECT_EQ(windows.x, (std::vector<std::int32_t>{'a', 'b', 'd', 'e', 'g', 'h'}));
  EXPECT_EQ(windows.y, (std::vector<std::int32_t>{'b', 'c', 'e', 'f', 'h', 'i'}));
  const auto two = consecutive_windows(bytes, 2, 2);
  EXPECT_EQ(two.count, 2u);
  EXPECT_EQ(two.x, (std::vector<std::int32_t>{'a', 'b', 'd', 'e'}));
  EXPECT_EQ(consecutive_windows(bytes, 10, 5).count, 0u);
  EXPECT_EQ(consecutive_windows(bytes, 9, 5).count, 1u);
}

TEST(ConsecutiveWindows, StartAtTheFirstByteOfASplit) {
  std::string bytes(90, 'a');
  bytes += "0123456789";  // the validation split
  const auto data = dataset(bytes, 1, 3);
  const auto windows = data.consecutive_windows(Split::val, 3, 10);
  ASSERT_EQ(windows.count, 2u);
  EXPECT_EQ(windows.x, (std::vector<std::int32_t>{'0', '1', '2', '4', '5', '6'}));
  EXPECT_EQ(windows.y, (std::vector<std::int32_t>{'1', '2', '3', '5', '6', '7'}));
}

}  // namespace
