// quantize() cuts arrays into tiles (random-word buffers) and chunks (parallel work); every element
// must still be Q(fl(x·s)) / s with its own Philox word, whatever tile or chunk it falls in. Sizes
// sit on and around those edges, from empty to past the size where chunks grow beyond the minimum.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "format/codec.hpp"
#include "format/philox.hpp"
#include "quant/quantize.hpp"
#include "reference_grid.hpp"
#include "test_tensors.hpp"

namespace altgrad::quant_test {
namespace {

using format::Rounding;

constexpr std::size_t kTile = 1024, kChunk = 16 * 1024;
constexpr std::size_t kEdgeSizes[] = {0,         1,         kTile - 1,  kTile,         kTile + 1, kChunk - 1,
                                      kChunk,    kChunk + 1, 2 * kChunk + 1, 3 * kChunk + 1000};

quant::QuantizeOptions options(Rounding r) {
  quant::QuantizeOptions o;
  o.rounding = r;
  o.scale = 0.37f;
  o.seed = 0x0bad'cafe'0000'0001ull;
  o.stream = 4;
  o.first_index = 3;  // unaligned with the Philox groups of four
  return o;
}

// The first element that differs from the element-wise definition, or success.
::testing::AssertionResult matches_elementwise(const format::Format& f, const std::vector<float>& x,
                                               const std::vector<float>& y, const quant::QuantizeOptions& o) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::uint32_t word = format::philox_word(o.seed, o.stream, o.first_index + i);
    const float expected = format::decode(f, format::encode(f, o.rounding, x[i] * o.scale, word)) / o.scale;
    if (std::bit_cast<std::uint32_t>(y[i]) != std::bit_cast<std::uint32_t>(expected)) {
      return ::testing::AssertionFailure() << "element " << i << " of " << x.size() << ": x=" << x[i] << " gave "
                                           << y[i] << ", expected " << expected;
    }
  }
  return ::testing::AssertionSuccess();
}

float scalar_amax(const std::vector<float>& x) {
  float amax = 0.0f;
  for (float v : x) amax = std::isnan(v) || std::fabs(v) <= amax ? amax : std::fabs(v);
  return amax;
}

TEST(Chunking, EveryRoundingIsElementwiseAtTileAndChunkEdges) {
  const format::Format f = load(kE4m3);
  for (std::size_t n : kEdgeSizes) {
    const auto x = log_uniform_tensor(n, static_cast<std::uint32_t>(n) + 3, -14, 10);
    for (Rounding r : format::kAllRoundings) {
      std::vector<float> y(n);
      const quant::QuantStats s = quant::quantize(f, x, y, options(r));
      EXPECT_TRUE(matches_elementwise(f, x, y, options(r))) << "rounding " << static_cast<int>(r);
      EXPECT_EQ(s.count, n);
      EXPECT_EQ(s.amax, scalar_amax(x));
    }
  }
}

// More than 256 minimum chunks: the chunk size then grows (to a whole number of tiles), and the
// tiles inside a chunk no longer start at multiples of the minimum chunk.
TEST(Chunking, ArraysBeyondTheMaximumChunkCountStayElementwise) {
  const format::Format f = load(kE4m3);
  const std::size_t n = 256 * kChunk + 1025;
  const auto x = log_uniform_tensor(n, 77, -14, 10);
  std::vector<float> y(n);
  const quant::QuantStats s = quant::quantize(f, x, y, options(Rounding::stochastic));
  EXPECT_TRUE(matches_elementwise(f, x, y, options(Rounding::stochastic)));
  EXPECT_EQ(s.count, n);
  EXPECT_EQ(s.amax, scalar_amax(x));
}

}  // namespace
}  // namespace altgrad::quant_test
