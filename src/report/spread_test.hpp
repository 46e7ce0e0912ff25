#pragma once
// Whether two groups' seed-to-seed spreads differ: the ratio of their standard deviations, with
// the classical F test of equal variances and the Brown–Forsythe form of Levene's test (deviations
// from each group's median), which holds up where the values are not normal. A report that says
// one recipe "varies less between seeds" than another quotes these p-values beside the ratio
// (docs/experiments.md, "Spreads").
#include <optional>
#include <span>

namespace altgrad::report {

// I_x(a, b), the regularized incomplete beta function, for x in [0, 1] and a, b > 0: its continued
// fraction (DLMF 8.17.22) by the modified Lentz method, to double precision.
double regularized_incomplete_beta(double x, double a, double b);

// P(F ≤ f) for Fisher's F with (d1, d2) degrees of freedom: I_{d1 f / (d1 f + d2)}(d1/2, d2/2)
// (DLMF 8.17 and Abramowitz & Stegun 26.6.2). 0 for f ≤ 0.
double f_cdf(double f, double d1, double d2);

struct SpreadTest {
  double sd_ratio = 0.0;  // s_group / s_baseline, sample standard deviations (n − 1)
  // F = s_group² / s_baseline² on (n_group − 1, n_baseline − 1) degrees of freedom, two-sided:
  // p = min(1, 2 · min(P(F ≤ f), P(F ≥ f))).
  double f_p = 1.0;
  // Brown–Forsythe: z = |x − median of its group|; W = (N − 2) · Σ n_i (z̄_i − z̄)² / Σ (z − z̄_i)²
  // on (1, N − 2) degrees of freedom, p = P(F ≥ W). None where every z equals its group's mean
  // (W is 0/0: two seeds per group, for one, leave both deviations equal).
  std::optional<double> levene_p;
};

// The test of `group` against `baseline`; none when either has fewer than two values or a
// standard deviation of 0 (no ratio to test).
std::optional<SpreadTest> spread_test(std::span<const double> group, std::span<const double> baseline);

}  // namespace altgrad::report
