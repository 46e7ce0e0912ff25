// LossSpikeDetector and GradNormSpikeDetector on hand-written sequences, and the checkpoint round
// trip of the gradient-norm history.
#include "diag/spike_detectors.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace altgrad::diag_test {
namespace {

using diag::GradNormSpikeDetector;
using diag::GradNormSpikeOptions;
using diag::LossSpikeDetector;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(LossSpikeDetector, FlagsJumpsAgainstThePreviousStep) {
  LossSpikeDetector d;
  EXPECT_FALSE(d.observe(1.0));   // the first step never flags
  EXPECT_FALSE(d.observe(1.5));
  EXPECT_TRUE(d.observe(3.1));    // > 2 · 1.5
  EXPECT_FALSE(d.observe(3.0));
  EXPECT_FALSE(d.observe(6.0));   // = 2 · 3.0 is not above
  EXPECT_TRUE(d.observe(12.1));
  EXPECT_FALSE(d.observe(0.5));   // drops never flag
}

TEST(LossSpikeDetector, FirstStepNeverFlagsWhateverItsValue) {
  LossSpikeDetector d(1.5);
  EXPECT_FALSE(d.observe(1e30));
  EXPECT_TRUE(d.observe(1e31));
}

TEST(LossSpikeDetector, NaNLossesAreNotItsConcern) {
  LossSpikeDetector d;
  d.observe(1.0);
  EXPECT_FALSE(d.observe(kNaN));
  EXPECT_FALSE(d.observe(100.0));  // the comparison with a NaN previous loss is false
  EXPECT_TRUE(d.observe(201.0));
}

TEST(LossSpikeDetector, RestoreCarriesThePreviousLoss) {
  LossSpikeDetector d;
  d.observe(2.0);
  LossSpikeDetector resumed;
  resumed.restore(d.previous());
  EXPECT_EQ(resumed.previous(), 2.0);
  EXPECT_TRUE(resumed.observe(4.5));
  EXPECT_FALSE(LossSpikeDetector().previous().has_value());
  EXPECT_THROW(LossSpikeDetector(0.0), std::invalid_argument);
}

TEST(GradNormSpikeDetector, DefaultsAreTheDocumentedOnes) {
  const GradNormSpikeDetector d;
  EXPECT_EQ(d.options().ratio, 100.0);
  EXPECT_EQ(d.options().window, 100u);
  EXPECT_EQ(d.options().min_history, 10u);
  EXPECT_TRUE(std::isnan(d.median()));
  EXPECT_TRUE(d.history().empty());
}

TEST(GradNormSpikeDetector, FlagsAgainstTheMedianOfTheWindow) {
  GradNormSpikeDetector d({.ratio = 10.0, .window = 5, .min_history = 3});
  EXPECT_FALSE(d.observe(1.0));
  EXPECT_FALSE(d.observe(2.0));
  EXPECT_FALSE(d.observe(300.0));  // only two norms recorded before it: too few to judge
  EXPECT_FALSE(d.observe(2.5));    // median(1, 2, 300) = 2
  EXPECT_EQ(d.median(), 2.25);     // even count: (2 + 2.5) / 2
  EXPECT_TRUE(d.observe(22.6));    // > 10 · 2.25
  EXPECT_EQ(d.median(), 2.5);      // (1, 2, 2.5, 22.6, 300)
  EXPECT_FALSE(d.observe(25.0));   // = 10 · 2.5 is not above; 1 leaves the window
  EXPECT_EQ(d.history(), (std::vector<double>{2.0, 300.0, 2.5, 22.6, 25.0}));
  EXPECT_EQ(d.median(), 22.6);
}

TEST(GradNormSpikeDetector, NonFiniteNormsAreNeitherFlaggedNorRecorded) {
  GradNormSpikeDetector d({.ratio = 2.0, .window = 4, .min_history = 1});
  d.observe(1.0);
  EXPECT_FALSE(d.observe(kInf));
  EXPECT_FALSE(d.observe(kNaN));
  EXPECT_EQ(d.history(), std::vector<double>{1.0});
  EXPECT_TRUE(d.observe(2.5));
}

TEST(GradNormSpikeDetector, WindowKeepsTheNewestNorms) {
  GradNormSpikeDetector d;
  for (int i = 1; i <= 150; ++i) d.observe(i);
  const std::vector<double> h = d.history();
  ASSERT_EQ(h.size(), 100u);
  EXPECT_EQ(h.front(), 51.0);
  EXPECT_EQ(h.back(), 150.0);
  EXPECT_EQ(d.median(), 100.5);
}

TEST(GradNormSpikeDetector, RestoreRoundTrip) {
  const GradNormSpikeOptions options{.ratio = 3.0, .window = 6, .min_history = 4};
  GradNormSpikeDetector original(options);
  for (const double norm : {1.0, 1.2, 0.9, 5.0, 1.1, 1.0, 0.8, 4.0}) original.observe(norm);
  GradNormSpikeDetector resumed(options);
  resumed.restore(original.history());
  EXPECT_EQ(resumed.history(), original.history());
  for (const double norm : {3.5, 1.0, 9.0, 0.7, 2.0, 30.0, 1.0}) {
    EXPECT_EQ(resumed.observe(norm), original.observe(norm)) << norm;
    EXPECT_EQ(resumed.history(), original.history());
  }
}

TEST(GradNormSpikeDetector, RestoreKeepsTheNewestWindowAndRejectsNonFinite) {
  GradNormSpikeDetector d({.ratio = 2.0, .window = 3, .min_history = 2});
  d.restore(std::vector<double>{1.0, 2.0, 3.0, 4.0, 5.0});
  EXPECT_EQ(d.history(), (std::vector<double>{3.0, 4.0, 5.0}));
  d.observe(6.0);
  EXPECT_EQ(d.history(), (std::vector<double>{4.0, 5.0, 6.0}));
  d.restore(std::vector<double>{7.0});
  EXPECT_EQ(d.history(), std::vector<double>{7.0});
  EXPECT_FALSE(d.observe(100.0));  // one norm recorded: below min_history
  EXPECT_TRUE(d.observe(200.0));   // median(7, 100) = 53.5
  EXPECT_THROW(d.restore(std::vector<double>{1.0, kNaN}), std::invalid_argument);
}

TEST(GradNormSpikeDetector, RejectsBadOptions) {
  EXPECT_THROW(GradNormSpikeDetector({.ratio = 0.0}), std::invalid_argument);
  EXPECT_THROW(GradNormSpikeDetector({.ratio = 100.0, .window = 5, .min_history = 6}), std::invalid_argument);
  EXPECT_THROW(GradNormSpikeDetector({.ratio = 100.0, .window = 5, .min_history = 0}), std::invalid_argument);
  EXPECT_THROW(GradNormSpikeDetector({.ratio = 100.0, .window = 0, .min_history = 0}), std::invalid_argument);
}

}  // namespace
}  // namespace altgrad::diag_test
