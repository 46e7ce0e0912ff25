// attention_entropy_per_head and layer_entropy on rows with known entropies and against a long
// double brute force.
#include "diag/attention_entropy.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/thread_count.hpp"

namespace altgrad::diag_test {
namespace {

using diag::attention_entropy_per_head;
using diag::layer_entropy;

struct Shape {
  std::size_t B, NH, T;
  std::size_t size() const { return B * NH * T * T; }
  std::size_t row(std::size_t b, std::size_t h, std::size_t t) const { return ((b * NH + h) * T + t) * T; }
};

// Row t of every head: 1/(t+1) at keys 0..t, 0 after.
std::vector<float> uniform_causal(const Shape& s) {
  std::vector<float> p(s.size(), 0.0f);
  for (std::size_t b = 0; b < s.B; ++b)
    for (std::size_t h = 0; h < s.NH; ++h)
      for (std::size_t t = 0; t < s.T; ++t)
        for (std::size_t k = 0; k <= t; ++k) p[s.row(b, h, t) + k] = 1.0f / static_cast<float>(t + 1);
  return p;
}

// Causal softmax rows of random logits.
std::vector<float> random_causal(const Shape& s, std::uint64_t seed, float logit_scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, logit_scale);
  std::vector<float> p(s.size(), 0.0f);
  std::vector<double> e(s.T);
  for (std::size_t r = 0; r < s.B * s.NH * s.T; ++r) {
    const std::size_t t = r % s.T;
    double sum = 0;
    for (std::size_t k = 0; k <= t; ++k) sum += e[k] = std::exp(normal(rng));
    for (std::size_t k = 0; k <= t; ++k) p[r * s.T + k] = static_cast<float>(e[k] / sum);
  }
  return p;
}

// Mean over the (B, T) rows of each head of −Σ p ln p, straight from the definition.
std::vector<long double> brute_force(const std::vector<float>& p, const Shape& s) {
  std::vector<long double> per_head(s.NH, 0);
  for (std::size_t h = 0; h < s.NH; ++h) {
    for (std::size_t b = 0; b < s.B; ++b)
      for (std::size_t t = 0; t < s.T; ++t)
        for (std::size_t k = 0; k < s.T; ++k) {
          const long double q = p[s.row(b, h, t) + k];
          if (q > 0) per_head[h] -= q * std::log(q);
        }
    per_head[h] /= static_cast<long double>(s.B * s.T);
  }
  return per_head;
}

TEST(AttentionEntropy, UniformCausalRowsGiveMeanOfLogTPlusOne) {
  const Shape s{2, 3, 64};
  const std::vector<double> per_head = attention_entropy_per_head(uniform_causal(s), s.B, s.NH, s.T);
  ASSERT_EQ(per_head.size(), s.NH);
  long double expected = 0;
  for (std::size_t t = 0; t < s.T; ++t) expected += std::log(static_cast<long double>(t + 1));
  expected /= static_cast<long double>(s.T);
  // float(1/(t+1)) is off by up to 2^-24 relative, which moves each row's entropy by about that much.
  for (const double h : per_head) EXPECT_NEAR(h, static_cast<double>(expected), 1e-6);
  const std::vector<long double> reference = brute_force(uniform_causal(s), s);
  for (std::size_t h = 0; h < s.NH; ++h) EXPECT_NEAR(per_head[h], static_cast<double>(reference[h]), 1e-13);
}

TEST(AttentionEntropy, PowerOfTwoRowsAreExact) {
  // With T = 2 rows are [1, 0] and [1/2, 1/2], both exact in float: entropies 0 and ln 2.
  const Shape s{1, 1, 2};
  const std::vector<double> per_head = attention_entropy_per_head(uniform_causal(s), s.B, s.NH, s.T);
  EXPECT_DOUBLE_EQ(per_head[0], std::log(2.0) / 2);
}

TEST(AttentionEntropy, OneHotRowsHaveZeroEntropy) {
  const Shape s{2, 2, 16};
  std::vector<float> p(s.size(), 0.0f);
  for (std::size_t r = 0; r < s.B * s.NH * s.T; ++r) p[r * s.T + (r % s.T) / 2] = 1.0f;
  for (const double h : attention_entropy_per_head(p, s.B, s.NH, s.T)) EXPECT_EQ(h, 0.0);
}

TEST(AttentionEntropy, HeadsAreSeparateAndLayerSummarizesThem) {
  // Head 0 uniform, head 1 one-hot on the diagonal, head 2 random.
  const Shape s{3, 3, 32};
  std::vector<float> p = random_causal(s, 5, 1.0f);
  const std::vector<float> uniform = uniform_causal(s);
  for (std::size_t b = 0; b < s.B; ++b)
    for (std::size_t t = 0; t < s.T; ++t)
      for (std::size_t k = 0; k < s.T; ++k) {
        p[s.row(b, 0, t) + k] = uniform[s.row(b, 0, t) + k];
        p[s.row(b, 1, t) + k] = k == t ? 1.0f : 0.0f;
      }
  const std::vector<double> per_head = attention_entropy_per_head(p, s.B, s.NH, s.T);
  const std::vector<long double> reference = brute_force(p, s);
  for (std::size_t h = 0; h < s.NH; ++h) EXPECT_NEAR(per_head[h], static_cast<double>(reference[h]), 1e-13);
  EXPECT_EQ(per_head[1], 0.0);
  const diag::LayerEntropy layer = layer_entropy(per_head);
  EXPECT_DOUBLE_EQ(layer.mean, (per_head[0] + per_head[1] + per_head[2]) / 3);
  EXPECT_EQ(layer.min, 0.0);
}

TEST(AttentionEntropy, RandomRowsMatchBruteForce) {
  for (const float scale : {0.1f, 1.0f, 8.0f}) {
    const Shape s{2, 4, 48};
    const std::vector<float> p = random_causal(s, 17, scale);
    const std::vector<double> per_head = attention_entropy_per_head(p, s.B, s.NH, s.T);
    const std::vector<long double> reference = brute_force(p, s);
    for (std::size_t h = 0; h < s.NH; ++h) EXPECT_NEAR(per_head[h], static_cast<double>(reference[h]), 1e-13);
  }
}

TEST(AttentionEntropy, MalformedRowsGiveNaNAndSizesAreChecked) {
  const Shape s{1, 2, 4};
  std::vector<float> p = uniform_causal(s);
  p[s.row(0, 1, 2)] = -0.25f;
  const std::vector<double> per_head = attention_entropy_per_head(p, s.B, s.NH, s.T);
  EXPECT_FALSE(std::isnan(per_head[0]));
  EXPECT_TRUE(std::isnan(per_head[1]));
  const diag::LayerEntropy layer = layer_entropy(per_head);
  EXPECT_TRUE(std::isnan(layer.mean) && std::isnan(layer.min));
  p[s.row(0, 1, 2)] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(attention_entropy_per_head(p, s.B, s.NH, s.T)[1]));
  EXPECT_THROW(attention_entropy_per_head(p, s.B, s.NH, s.T + 1), std::invalid_argument);
  const diag::LayerEntropy none = layer_entropy({});
  EXPECT_TRUE(std::isnan(none.mean) && std::isnan(none.min));
}

TEST(AttentionEntropy, SameBitsWithOneAndTwoThreads) {
  const Shape s{4, 6, 128};
  const std::vector<float> p = random_causal(s, 23, 2.0f);
  const auto one = test_support::with_threads(1, [&] { return attention_entropy_per_head(p, s.B, s.NH, s.T); });
  const auto two = test_support::with_threads(2, [&] { return attention_entropy_per_head(p, s.B, s.NH, s.T); });
  ASSERT_EQ(one.size(), two.size());
  for (std::size_t h = 0; h < one.size(); ++h) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(one[h]), std::bit_cast<std::uint64_t>(two[h])) << "head " << h;
  }
}

}  // namespace
}  // namespace altgrad::diag_test
