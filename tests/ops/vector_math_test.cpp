#include "ops/cpu/vector_math.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "ops/cpu/softmax_row.hpp"

namespace {

using namespace altgrad::ops::cpu;

// Distance in units of the float spacing at the true value (its ulp), from a double reference.
double ulps(float got, double want) {
  const float rounded = static_cast<float>(want);
  const double ulp = std::nextafter(rounded, std::numeric_limits<float>::infinity()) - rounded;
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

// About 110,000 points over the whole clamped range (steps of 1e-4 relative, 5e-5 near zero), and
// the ends, against libm's double exp.
TEST(ExpFloat, WithinTwoUlpOverItsRange) {
  double worst = 0;
  float worst_at = 0;
  for (double t = -87.3; t <= 88.3; t += 1e-4 * std::max(std::fabs(t), 0.5)) {
    const auto x = static_cast<float>(t);
    const double e = ulps(exp_float(x), std::exp(static_cast<double>(x)));
    if (e > worst) worst = e, worst_at = x;
  }
  EXPECT_LE(worst, 2.0) << "at x = " << worst_at;
  for (const float x : {0.0f, -0.0f, 1.0f, -1.0f, 1e-8f, -1e-8f, 88.3f, -87.3f})
    EXPECT_LE(ulps(exp_float(x), std::exp(static_cast<double>(x))), 2.0) << "x = " << x;
  EXPECT_EQ(exp_float(0.0f), 1.0f);
}

TEST(ExpFloat, FlushesBelowItsRangeClampsAboveAndKeepsNaN) {
  EXPECT_GT(exp_float(-87.3f), 0.0f);
  EXPECT_EQ(exp_float(-87.31f), 0.0f);
  EXPECT_EQ(exp_float(-1000.0f), 0.0f);
  EXPECT_EQ(exp_float(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(exp_float(1000.0f), exp_float(88.3f));
  EXPECT_TRUE(std::isfinite(exp_float(std::numeric_limits<float>::infinity())));
  EXPECT_TRUE(std::isnan(exp_float(std::numeric_limits<float>::quiet_NaN())));
}

// The vector form gives each lane the float form's bits: over the whole range, both ends, beyond
// them, and NaN.
TEST(ExpLanes, EachLaneIsExpFloat) {
  std::vector<float> x;
  for (double t = -90.0; t <= 90.0; t += 0.0137) x.push_back(static_cast<float>(t));
  for (const float v : {0.0f, -0.0f, 88.3f, -87.3f, -87.31f, 88.31f, 1e-30f, -1e-30f})
    x.push_back(v);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  x.resize((x.size() + kPieceLanes - 1) / kPieceLanes * kPieceLanes, 1.0f);
  for (std::size_t i = 0; i < x.size(); i += kPieceLanes) {
    const PieceLanes e = exp_lanes(AtPiece{i}(x.data()));
    for (std::size_t l = 0; l < kPieceLanes; ++l) {
      const float want = exp_float(x[i + l]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(e[l])) << "x = " << x[i + l];
      } else {
        EXPECT_EQ(std::bit_cast<std::uint32_t>(e[l]), std::bit_cast<std::uint32_t>(want)) << "x = " << x[i + l];
      }
    }
  }
}

// The documented order, written out: term i into partial sum i mod 16, then halves folded pairwise.
float documented_lane_sum(const std::vector<float>& x) {
  float partial[16] = {};
  for (std::size_t i = 0; i < x.size(); ++i) partial[i % 16] += x[i];
  for (std::size_t half = 8; half > 0; half /= 2)
    for (std::size_t l = 0; l < half; ++l) partial[l] += partial[l + half];
  return partial[0];
}

// Terms of very different sizes, so that another order of the adds gives other bits.
std::vector<float> uneven_terms(std::size_t n) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = std::ldexp(1.0f + 0.1f * static_cast<float>(i % 7), static_cast<int>(i * 5 % 31) - 12);
  return x;
}

TEST(LaneSum, AddsInTheDocumentedOrder) {
  for (std::size_t n = 0; n <= 70; ++n) {
    const std::vector<float> x = uneven_terms(n);
    const float sum = lane_sum(n, [&](auto at) { return at(x.data()); });
    EXPECT_EQ(sum, documented_lane_sum(x)) << "n = " << n;
    double exact = 0;
    for (const float v : x) exact += v;
    EXPECT_NEAR(sum, exact, 1e-6 * exact + 1e-30) << "n = " << n;
  }
}

// The order matters, so the check above can fail: a serial sum of the same terms differs somewhere.
TEST(LaneSum, DiffersFromTheSerialSum) {
  int differing = 0;
  for (std::size_t n = 17; n <= 70; ++n) {
    const std::vector<float> x = uneven_terms(n);
    float serial = 0;
    for (const float v : x) serial += v;
    differing += serial != documented_lane_sum(x);
  }
  EXPECT_GT(differing, 0);
}

// The row's maximum wherever it lies, at every length and remainder, as one serial scan finds it
// (a row of −∞ has −∞).
TEST(SoftmaxRow, FindsTheMaximumAtEveryPosition) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (std::size_t n = 1; n <= 70; ++n) {
    std::vector<float> x(n), out(n);
    for (std::size_t peak = 0; peak < n; ++peak) {
      for (std::size_t i = 0; i < n; ++i) x[i] = -0.25f * static_cast<float>((i * 7) % 13) - 1.0f;
      x[peak] = 0.5f;
      EXPECT_EQ(softmax_row(x.data(), out.data(), n).max, 0.5f) << "n = " << n << ", peak at " << peak;
    }
    const std::vector<float> all_minus_inf(n, -kInf);
    EXPECT_EQ(softmax_row(all_minus_inf.data(), out.data(), n).max, -kInf) << "n = " << n;
  }
}

// The float softmax against the double one (libm exp, serial sum) on rows of every length to 300.
TEST(SoftmaxRow, FloatAgreesWithTheDoubleReference) {
  for (std::size_t n = 1; n <= 300; n += 7) {
    std::vector<float> in(n), out(n);
    std::vector<double> in_double(n), out_double(n);
    for (std::size_t i = 0; i < n; ++i) in_double[i] = in[i] = 0.37f * static_cast<float>((i * 13) % 29) - 4.0f;
    const SoftmaxRow<float> row = softmax_row(in.data(), out.data(), n);
    const SoftmaxRow<double> want = softmax_row(in_double.data(), out_double.data(), n);
    EXPECT_EQ(row.max, want.max);
    EXPECT_NEAR(row.sum, want.sum, 1e-6 * want.sum);
    for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(out[i], out_double[i], 1e-6 * out_double[i] + 1e-9) << n << " " << i;
  }
}

// The documented float arithmetic written out one value at a time: each exp_float(x − max) times
// 1 / (their sum in lane_sum's order).
struct DocumentedSoftmax {
  float max, sum;
  std::vector<float> out;
};
DocumentedSoftmax documented_softmax(const std::vector<float>& x) {
  DocumentedSoftmax s{*std::max_element(x.begin(), x.end()), 0.0f, std::vector<float>(x.size())};
  for (std::size_t i = 0; i < x.size(); ++i) s.out[i] = exp_float(x[i] - s.max);
  s.sum = documented_lane_sum(s.out);
  const float inverse_sum = 1.0f / s.sum;
  for (float& v : s.out) v *= inverse_sum;
  return s;
}

// The float softmax_row has the documented bits in [0, n) and zeros up to its last vector's end where
// the room allows, whatever the room past n holds (NaN here: a lane read past n must only be
// selected away), for rows ending anywhere in a vector, with room to the vector's end and without,
// in place and not.
TEST(SoftmaxRow, LanesHaveTheDocumentedBits) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t n = 1; n <= 70; ++n) {
    const std::size_t vector_end = (n + kSumLanes - 1) / kSumLanes * kSumLanes;
    // Exponentials of like sizes with full mantissas, whose sum rounds differently in another order.
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = -static_cast<float>((i * 2654435761u) % 1000003) / 500000.0f;
    const DocumentedSoftmax want = documented_softmax(x);
    for (const std::size_t room : {n, vector_end, vector_end + 5}) {
      for (const bool in_place : {true, false}) {
        std::vector<float> in(room + 3, nan), row(room + 3, nan);
        std::copy(x.begin(), x.end(), in.begin());
        if (in_place) row = in;
        const SoftmaxRow<float> got = softmax_row(in_place ? row.data() : in.data(), row.data(), n, room);
        const std::string where = "n " + std::to_string(n) + ", room " + std::to_string(room) + (in_place ? ", in place" : "");
        EXPECT_EQ(got.max, want.max) << where;
        EXPECT_EQ(std::bit_cast<std::uint32_t>(got.sum), std::bit_cast<std::uint32_t>(want.sum)) << where;
        for (std::size_t i = 0; i < n; ++i) {
          EXPECT_EQ(std::bit_cast<std::uint32_t>(row[i]), std::bit_cast<std::uint32_t>(want.out[i])) << where << ", " << i;
        }
        for (std::size_t i = n; i < std::min(room, vector_end); ++i) EXPECT_EQ(row[i], 0.0f) << where << ", " << i;
        for (std::size_t i = std::max(n, std::min(room, vector_end)); i < row.size(); ++i) {
          EXPECT_TRUE(std::isnan(row[i])) << "written past the room: " << where << ", " << i;
        }
      }
    }
  }
}

}  // namespace
