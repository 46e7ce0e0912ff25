// tensorboard_histogram: bucket boundaries, the open end buckets, skipped non-finite values and the
// sums, against values counted by hand.
#include "io/tensorboard_histogram.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <vector>

namespace altgrad::io_test {
namespace {

using io::check_tensorboard_histogram;
using io::tensorboard_histogram;
using io::TensorBoardHistogram;

TEST(TensorBoardHistogram, LeftEdgeIsInclusiveRightEdgeExclusive) {
  const std::vector<double> edges = {0.0, 1.0, 2.0};
  // -5 → bucket 0 (below e0); 0 and 0.5 → bucket 1; 1 and 1.5 → bucket 2; 2 and 9 → bucket 2 too,
  // the last bucket being open on the right.
  const std::vector<float> values = {-5.0f, 0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 9.0f};
  const TensorBoardHistogram h = tensorboard_histogram(values, edges);
  EXPECT_EQ(h.right_edges, edges);
  EXPECT_EQ(h.counts, (std::vector<double>{1, 2, 4}));
  EXPECT_EQ(h.num, 7);
  EXPECT_EQ(h.min, -5.0);
  EXPECT_EQ(h.max, 9.0);
  EXPECT_EQ(h.sum, -5.0 + 0.0 + 0.5 + 1.0 + 1.5 + 2.0 + 9.0);
  EXPECT_EQ(h.sum_squares, 25.0 + 0.0 + 0.25 + 1.0 + 2.25 + 4.0 + 81.0);
}

TEST(TensorBoardHistogram, SkipsNonFiniteValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {std::numeric_limits<float>::quiet_NaN(), -inf, 3.0f, inf};
  const std::vector<double> edges = {0.0, 10.0};
  const TensorBoardHistogram h = tensorboard_histogram(values, edges);
  EXPECT_EQ(h.counts, (std::vector<double>{0, 1}));
  EXPECT_EQ(h.num, 1);
  EXPECT_EQ(h.min, 3.0);
  EXPECT_EQ(h.max, 3.0);
  EXPECT_EQ(h.sum, 3.0);
  EXPECT_EQ(h.sum_squares, 9.0);
}

TEST(TensorBoardHistogram, NoValuesGiveZeros) {
  const std::vector<double> edges = {1.0};
  const TensorBoardHistogram h = tensorboard_histogram({}, edges);
  EXPECT_EQ(h.counts, (std::vector<double>{0}));
  EXPECT_EQ(h.num, 0);
  EXPECT_EQ(h.min, 0);
  EXPECT_EQ(h.max, 0);
}

TEST(TensorBoardHistogram, RejectsEdgesThatDoNotIncrease) {
  const std::vector<float> values = {1.0f};
  EXPECT_THROW(tensorboard_histogram(values, std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(tensorboard_histogram(values, std::vector<double>{1.0, 1.0}), std::invalid_argument);
  EXPECT_THROW(tensorboard_histogram(values, std::vector<double>{2.0, 1.0}), std::invalid_argument);
  EXPECT_THROW(tensorboard_histogram(values, std::vector<double>{0.0, std::numeric_limits<double>::quiet_NaN()}),
               std::invalid_argument);
}

TEST(TensorBoardHistogram, CheckRejectsCountsThatDoNotMatchEdges) {
  TensorBoardHistogram h;
  h.right_edges = {1.0, 2.0};
  h.counts = {1.0};
  EXPECT_THROW(check_tensorboard_histogram(h), std::invalid_argument);
  h.counts = {1.0, 0.0};
  EXPECT_NO_THROW(check_tensorboard_histogram(h));
}

}  // namespace
}  // namespace altgrad::io_test
