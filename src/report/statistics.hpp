#pragma once
// The statistics behind every comparison the report makes: a mean over seeds with its Student t
// confidence interval, and the paired comparison of a group with its baseline seed by seed (runs
// that share a seed share initial weights and batches, so their difference is the format's effect
// with the seed's own variation taken out).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace altgrad::report {

inline constexpr double kConfidence = 0.95;  // every interval the report shows

// P(|T| ≤ t) for Student's t with `dof` ≥ 1 degrees of freedom: the closed forms of Abramowitz &
// Stegun 26.7.3 (odd dof) and 26.7.4 (even dof), exact for integer dof.
double t_central_probability(double t, int dof);

// The two-sided critical value: the t ≥ 0 with P(|T| ≤ t) = confidence (12.71 at 1 dof, 1.96 as
// dof → ∞ for 95%).
double t_critical(double confidence, int dof);

// P(|T| ≥ |t|): the two-sided p-value of a t statistic with `dof` degrees of freedom.
double t_two_sided_p(double t, int dof);

// The exact two-sided sign test of n nonzero paired gaps of which `positive` are positive, under
// H0 "each sign is a fair coin": p = min(1, 2 · P(X ≥ max(positive, n − positive))), X ~ Bin(n, 1/2).
// 3 seeds of 3 agreeing give p = 0.25; 1 for n = 0.
double sign_test_p(std::size_t positive, std::size_t n);

// The fewest seeds (2 … limit) at which a paired gap with this seed-to-seed standard deviation,
// its mean `distance` away from a threshold, is resolved against it with probability `power` by
// a two-sided test at level alpha: the least n with (t_{1−α/2, n−1} + t_{power, n−1}) · sd/√n ≤
// |distance| (the usual normal-theory sample size with Student quantiles). None when even `limit`
// seeds fall short, or the distance is 0.
std::optional<std::size_t> seeds_for_power(double sd, double distance, double alpha, double power,
                                           std::size_t limit = 1000);

// A mean estimated from n values: sd is the sample standard deviation (n − 1 in the denominator,
// 0 for one value); the interval is mean ± t_critical(kConfidence, n − 1) · sd / √n, none for n < 2.
struct MeanEstimate {
  std::size_t n = 0;
  double mean = 0.0, sd = 0.0;
  std::optional<double> ci_low, ci_high;

  // Whether the interval excludes 0: the sign of the mean is resolved at this confidence.
  bool resolved() const { return ci_low && (*ci_low > 0.0 || *ci_high < 0.0); }
};
MeanEstimate estimate_mean(std::span<const double> values);

// One run's final value, for pairing by seed.
struct SeedValue {
  std::int64_t seed = 0;
  double value = 0.0;
  std::string run;
};

// A group against its baseline: per seed both have, the gap 100 · (x − b) / b in percent.
struct PairedGap {
  MeanEstimate gap_pct;
  std::size_t same_sign = 0;          // seeds whose gap has the sign of the mean gap (0 counts as neither)
  std::size_t positive = 0, negative = 0;  // seeds whose gap is above, below 0: the sign test's counts
  std::vector<std::string> unpaired;  // runs of either side whose seed the other side lacks
};
PairedGap paired_gap(const std::vector<SeedValue>& group, const std::vector<SeedValue>& baseline);

// What the paired gap says of the order of the two recipes, in words: "resolved" when the interval
// excludes 0, "not resolved with 3 seeds"; "1 paired seed: no interval"; "no paired seeds". Unpaired
// runs are named: "(unpaired: g9 b4)". The tables give the numbers, the verdict table this reading.
std::string reading(const PairedGap& gap);

// "p = 0.25 (3 of 3 positive)": sign_test_p of the paired gaps; empty when none is nonzero.
std::string sign_test_words(const PairedGap& gap);

// "paired +0.55% [-0.20, +1.30], 2 of 3 seeds agree: not resolved with 3 seeds"; with fewer than two
// paired seeds, the reading alone.
std::string describe(const PairedGap& gap);

}  // namespace altgrad::report
