// Delayed scaling (Transformer Engine style): the scale used at step t comes from the amaxes
// recorded at steps before t, reduced over a window of H by max or most_recent; it starts at 1 and
// a zero or non-finite reduced amax keeps the previous scale.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "support/special_floats.hpp"
#include "quant/scaling.hpp"
#include "reference_grid.hpp"
#include "test_tensors.hpp"

namespace altgrad::quant_test {
namespace {

using test_support::kInf;
using test_support::kNan;

using quant::AmaxAlgorithm;
using quant::DelayedScaling;


// The spec as a model over the full list of recorded amaxes: replay every step from scale 1.
class SpecModel {
 public:
  SpecModel(const RefGrid& g, std::size_t history, AmaxAlgorithm algorithm, int margin)
      : grid_(g), history_(history), algorithm_(algorithm), margin_(margin) {}

  void record(float amax) { amaxes_.push_back(amax); }

  // The scale for the next step: it has seen exactly the amaxes recorded so far.
  float scale() const {
    float scale = 1.0f;
    for (std::size_t step = 0; step < amaxes_.size(); ++step) {
      scale = reference_scale(grid_.max_finite, reduced_at(step), margin_, scale);
    }
    return scale;
  }

  // The last H amaxes, oldest first.
  std::vector<float> window() const {
    const std::size_t begin = amaxes_.size() > history_ ? amaxes_.size() - history_ : 0;
    return {amaxes_.begin() + static_cast<std::ptrdiff_t>(begin), amaxes_.end()};
  }

 private:
  // After recording step `step`: max over the window ending there (a non-finite entry makes the
  // reduction non-finite, so it freezes the scale until it ages out), or the step's own amax.
  float reduced_at(std::size_t step) const {
    if (algorithm_ == AmaxAlgorithm::most_recent) return amaxes_[step];
    const std::size_t first = step + 1 > history_ ? step + 1 - history_ : 0;
    float reduced = 0.0f;
    for (std::size_t i = first; i <= step; ++i) {
      if (!std::isfinite(amaxes_[i])) return amaxes_[i];
      reduced = std::max(reduced, amaxes_[i]);
    }
    return reduced;
  }

  RefGrid grid_;
  std::size_t history_;
  AmaxAlgorithm algorithm_;
  int margin_;
  std::vector<float> amaxes_;
};

bool same_floats(const std::vector<float>& a, const std::vector<float>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](float x, float y) {
    return std::bit_cast<std::uint32_t>(x) == std::bit_cast<std::uint32_t>(y);
  });
}

TEST(DelayedScaling, StartsAtScaleOneWithEmptyHistory) {
  const DelayedScaling ds(load(kE4m3), 4, AmaxAlgorithm::max, 0);
  EXPECT_EQ(ds.scale(), 1.0f);
  EXPECT_TRUE(ds.history().empty());
}

TEST(DelayedScaling, MaxAlgorithmAgesOldMaximaOutOfTheWindow) {
  DelayedScaling ds(load(kE4m3), 3, AmaxAlgorithm::max, 0);
  ds.record(7.0f);
  EXPECT_EQ(ds.scale(), 64.0f);   // 448 / 7
  ds.record(1.0f);
  ds.record(3.5f);
  EXPECT_EQ(ds.scale(), 64.0f);   // 7 is still in the window of three
  ds.record(1.0f);
  EXPECT_EQ(ds.scale(), 128.0f);  // 7 aged out: max of {1, 3.5, 1}
  ds.record(0.5f);
  ds.record(0.25f);
  EXPECT_EQ(ds.scale(), 448.0f);  // max of {1, 0.5, 0.25}
  EXPECT_EQ(ds.history(), (std::vector<float>{1.0f, 0.5f, 0.25f}));
}

TEST(DelayedScaling, MostRecentAlgorithmUsesTheLastAmaxOnly) {
  DelayedScaling ds(load(kE4m3), 3, AmaxAlgorithm::most_recent, 0);
  ds.record(7.0f);
  EXPECT_EQ(ds.scale(), 64.0f);
  ds.record(1.0f);
  EXPECT_EQ(ds.scale(), 448.0f);
  ds.record(14.0f);
  EXPECT_EQ(ds.scale(), 32.0f);
}

TEST(DelayedScaling, MarginDividesTheScaleByTwoToTheMargin) {
  DelayedScaling ds(load(kE4m3), 2, AmaxAlgorithm::max, 2);
  ds.record(7.0f);
  EXPECT_EQ(ds.scale(), 16.0f);  // 448 / (7 · 2^2)
}

TEST(DelayedScaling, ZeroOrNonFiniteMostRecentAmaxKeepsThePreviousScale) {
  DelayedScaling ds(load(kE4m3), 3, AmaxAlgorithm::most_recent, 0);
  ds.record(0.0f);
  EXPECT_EQ(ds.scale(), 1.0f);  // nothing finite seen yet: still the initial scale
  ds.record(7.0f);
  for (float amax : {0.0f, kNan, kInf}) {
    ds.record(amax);
    EXPECT_EQ(ds.scale(), 64.0f) << amax;
  }
  ds.record(14.0f);
  EXPECT_EQ(ds.scale(), 32.0f);
}

TEST(DelayedScaling, InfInTheWindowFreezesTheScaleUntilItAgesOut) {
  DelayedScaling ds(load(kE4m3), 3, AmaxAlgorithm::max, 0);
  ds.record(7.0f);
  ds.record(kInf);
  EXPECT_EQ(ds.scale(), 64.0f);
  ds.record(14.0f);
  ds.record(28.0f);
  EXPECT_EQ(ds.scale(), 64.0f);  // window {Inf, 14, 28}: frozen
  ds.record(56.0f);
  EXPECT_EQ(ds.scale(), 8.0f);   // window {14, 28, 56}: the Inf has left
}

TEST(DelayedScaling, AllZeroWindowKeepsThePreviousScale) {
  DelayedScaling ds(load(kE4m3), 2, AmaxAlgorithm::max, 0);
  ds.record(7.0f);
  ds.record(0.0f);
  ds.record(0.0f);
  EXPECT_EQ(ds.scale(), 64.0f);
}

// Amaxes over many orders of magnitude with zeros and infinities mixed in; NaN only for
// most_recent, since the spec defines a NaN reduction only as "not finite" there.
std::vector<float> amax_sequence(std::size_t steps, std::uint32_t seed, bool with_nan) {
  TensorRng rng(seed);
  std::vector<float> amaxes(steps);
  for (float& a : amaxes) {
    const std::uint32_t pick = rng.word() % 20;
    a = pick == 0 ? 0.0f : pick == 1 ? kInf : (pick == 2 && with_nan) ? kNan : std::fabs(rng.log_uniform(-20, 20));
  }
  return amaxes;
}

// The loop of a training run: step t quantizes with scale(), then records its own amax. The scale
// used at t must equal the model's scale over the amaxes of steps 0..t−1 only.
TEST(DelayedScaling, ScaleAtEveryStepMatchesTheSpecModel) {
  for (std::size_t history : {1, 2, 5, 16}) {
    for (AmaxAlgorithm algorithm : {AmaxAlgorithm::max, AmaxAlgorithm::most_recent}) {
      for (int margin : {0, 1}) {
        DelayedScaling ds(load(kE5m2), history, algorithm, margin);
        SpecModel model(kE5m2, history, algorithm, margin);
        const auto amaxes = amax_sequence(300, static_cast<std::uint32_t>(history * 10 + margin),
                                          algorithm == AmaxAlgorithm::most_recent);
        for (std::size_t t = 0; t < amaxes.size(); ++t) {
          ASSERT_EQ(ds.scale(), model.scale()) << "history " << history << " margin " << margin << " step " << t;
          ds.record(amaxes[t]);
          model.record(amaxes[t]);
          ASSERT_TRUE(same_floats(ds.history(), model.window())) << "step " << t;
        }
      }
    }
  }
}

TEST(DelayedScaling, RestoreRoundTripsHistoryAndScale) {
  const format::Format f = load(kE4m3);
  const auto amaxes = amax_sequence(40, 31, false);
  // Save after a wrapped ring (11 > 4), after a partly filled one (2), and from the start (0).
  for (std::size_t saved_at : {11, 2, 0}) {
    DelayedScaling original(f, 4, AmaxAlgorithm::max, 1);
    for (std::size_t t = 0; t < saved_at; ++t) original.record(amaxes[t]);
    DelayedScaling resumed(f, 4, AmaxAlgorithm::max, 1);
    resumed.restore(original.history(), original.scale());
    EXPECT_TRUE(same_floats(resumed.history(), original.history()));
    EXPECT_EQ(resumed.scale(), original.scale());
    // The resumed run must then behave exactly like the original one, window ageing included.
    for (std::size_t t = saved_at; t < amaxes.size(); ++t) {
      original.record(amaxes[t]);
      resumed.record(amaxes[t]);
      ASSERT_EQ(resumed.scale(), original.scale()) << "saved at " << saved_at << ", step " << t;
      ASSERT_TRUE(same_floats(resumed.history(), original.history()));
    }
  }
}

TEST(DelayedScaling, RestoreRejectsAHistoryLongerThanTheWindow) {
  DelayedScaling ds(load(kE4m3), 2, AmaxAlgorithm::max, 0);
  EXPECT_THROW(ds.restore(std::vector<float>{1.0f, 2.0f, 3.0f}, 4.0f), std::invalid_argument);
}

TEST(DelayedScaling, ZeroHistoryLengthIsRejected) {
  EXPECT_THROW(DelayedScaling(load(kE4m3), 0, AmaxAlgorithm::max, 0), std::invalid_argument);
}

}  // namespace
}  // namespace altgrad::quant_test
