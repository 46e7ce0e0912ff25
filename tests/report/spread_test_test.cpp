// The spread tests against independent references: Fisher's F distribution against its density
// integrated numerically (Simpson's rule in long double, from the density's textbook formula), its
// closed forms for d1 = 2, the identity F(1, ν) = T² with Student's t (statistics.hpp's closed
// form), and published critical values; the F and Brown–Forsythe statistics on a sample worked by
// hand.
#include "report/spread_test.hpp"

#include "report/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace altgrad::report {
namespace {

// ∫_0^f of x^(d1/2 − 1) (d1/d2)^(d1/2) (1 + d1 x/d2)^(−(d1+d2)/2) / B(d1/2, d2/2) dx, by Simpson's
// rule in u = √x (the integrand 2u · density(u²) ~ u^(d1 − 1) is smooth at 0 where the density is not).
long double integrated_f_cdf(long double f, long double d1, long double d2) {
  const long double log_beta = std::lgamma(d1 / 2) + std::lgamma(d2 / 2) - std::lgamma((d1 + d2) / 2);
  const auto integrand = [&](long double u) {
    if (u == 0) return d1 == 1 ? 2 * std::exp(0.5L * std::log(d1 / d2) - log_beta) : 0.0L;
    const long double x = u * u;
    return 2 * u * std::exp((d1 / 2 - 1) * std::log(x) + (d1 / 2) * std::log(d1 / d2) -
                            ((d1 + d2) / 2) * std::log1p(d1 * x / d2) - log_beta);
  };
  constexpr int kIntervals = 20000;  // even
  const long double h = std::sqrt(f) / kIntervals;
  long double sum = integrand(0) + integrand(std::sqrt(f));
  for (int i = 1; i < kIntervals; ++i) sum += integrand(i * h) * (i % 2 ? 4 : 2);
  return sum * h / 3;
}

TEST(FDistribution, CdfEqualsTheIntegratedDensity) {
  for (const double d1 : {1.0, 2.0, 3.0, 4.0, 7.0, 20.0}) {
    for (const double d2 : {1.0, 2.0, 5.0, 12.0, 40.0}) {
      for (const double f : {0.05, 0.5, 1.0, 3.0, 19.0}) {
        EXPECT_NEAR(f_cdf(f, d1, d2), static_cast<double>(integrated_f_cdf(f, d1, d2)), 1e-10)
            << "F(" << d1 << ", " << d2 << ") at " << f;
      }
    }
  }
}

TEST(FDistribution, ClosedFormsForTwoNumeratorDegreesOfFreedom) {
  for (const double d2 : {1.0, 2.0, 3.0, 10.0}) {
    for (const double f : {0.1, 1.0, 9.0, 39.0, 1000.0}) {
      EXPECT_NEAR(f_cdf(f, 2.0, d2), 1.0 - std::pow(1.0 + 2.0 * f / d2, -d2 / 2.0), 1e-13) << d2 << " " << f;
    }
  }
  EXPECT_NEAR(f_cdf(19.0, 2.0, 2.0), 0.95, 1e-14);  // F(2, 2): f / (1 + f)
  EXPECT_NEAR(f_cdf(39.0, 2.0, 2.0), 0.975, 1e-14);
}

TEST(FDistribution, OneNumeratorDegreeOfFreedomIsStudentTSquared) {
  for (const int dof : {1, 2, 4, 9, 30}) {
    for (const double t : {0.2, 1.0, 2.5, 6.0}) {
      EXPECT_NEAR(f_cdf(t * t, 1.0, dof), t_central_probability(t, dof), 1e-12) << dof << " " << t;
    }
  }
}

TEST(FDistribution, PublishedCriticalValues) {
  struct Row {
    double d1, d2, upper_quantile, probability;
  };
  // Upper percentage points of F, as any statistics table gives them to four figures.
  for (const Row& r : {Row{3, 3, 9.277, 0.95}, Row{5, 10, 3.326, 0.95}, Row{10, 20, 2.348, 0.95},
                       Row{20, 10, 2.774, 0.95}, Row{1, 10, 4.965, 0.95}, Row{4, 8, 7.006, 0.99}}) {
    EXPECT_NEAR(f_cdf(r.upper_quantile, r.d1, r.d2), r.probability, 2e-4) << r.d1 << ", " << r.d2;
  }
}

TEST(FDistribution, EdgesAndBadArguments) {
  EXPECT_EQ(f_cdf(0.0, 3, 4), 0.0);
  EXPECT_EQ(f_cdf(-1.0, 3, 4), 0.0);
  EXPECT_EQ(f_cdf(INFINITY, 3, 4), 1.0);
  EXPECT_TRUE(std::isnan(f_cdf(NAN, 3, 4)));
  EXPECT_THROW(regularized_incomplete_beta(1.5, 1, 1), std::invalid_argument);
  EXPECT_THROW(regularized_incomplete_beta(0.5, 0, 1), std::invalid_argument);
  EXPECT_NEAR(regularized_incomplete_beta(0.3, 1, 1), 0.3, 1e-15);  // the uniform distribution
}

// a = {1, 2, 4}: variance 7/3, median 2, deviations {1, 0, 2}. b = {1, 1.5, 2}: variance 1/4,
// median 1.5, deviations {0.5, 0, 0.5}. F = 28/3 on (2, 2) degrees of freedom: P(F ≥ f) = 1/(1 + f).
// Brown–Forsythe: group means of the deviations 1 and 1/3, grand mean 2/3, between 2/3, within
// 2 + 1/6, W = 4 · (2/3) / (13/6) = 16/13 on (1, 4).
TEST(SpreadTest, WorkedExample) {
  const std::vector<double> a = {1.0, 2.0, 4.0}, b = {1.0, 1.5, 2.0};
  const auto t = spread_test(a, b);
  ASSERT_TRUE(t);
  EXPECT_NEAR(t->sd_ratio, std::sqrt(28.0 / 3.0), 1e-14);
  EXPECT_NEAR(t->f_p, 2.0 / (1.0 + 28.0 / 3.0), 1e-13);
  ASSERT_TRUE(t->levene_p);
  EXPECT_NEAR(*t->levene_p, t_two_sided_p(std::sqrt(16.0 / 13.0), 4), 1e-12);
  // The other way round: the reciprocal ratio, the same two-sided p-values.
  const auto back = spread_test(b, a);
  ASSERT_TRUE(back);
  EXPECT_NEAR(back->sd_ratio, 1.0 / t->sd_ratio, 1e-14);
  EXPECT_NEAR(back->f_p, t->f_p, 1e-13);
  EXPECT_NEAR(*back->levene_p, *t->levene_p, 1e-13);
}

TEST(SpreadTest, EqualSpreadsGiveOne) {
  const std::vector<double> a = {1.0, 2.0, 3.0}, b = {10.0, 12.0, 11.0};
  const auto t = spread_test(a, b);
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->sd_ratio, 1.0);
  EXPECT_NEAR(t->f_p, 1.0, 1e-14);
  EXPECT_NEAR(*t->levene_p, 1.0, 1e-14);
}

TEST(SpreadTest, NoneWithoutTwoValuesOrASpread) {
  EXPECT_FALSE(spread_test(std::vector<double>{1.0}, std::vector<double>{1.0, 2.0}));
  EXPECT_FALSE(spread_test(std::vector<double>{1.0, 2.0}, std::vector<double>{3.0, 3.0}));
  // Two values per group: every deviation from its median equals the group's mean deviation.
  const auto two = spread_test(std::vector<double>{1.0, 2.0}, std::vector<double>{1.0, 4.0});
  ASSERT_TRUE(two);
  EXPECT_FALSE(two->levene_p);
  // F = 1/9 on (1, 1): P(F ≤ 1/9) = P(|T| ≤ 1/3) = P(|T| ≥ 3) for one degree of freedom (Cauchy).
  EXPECT_NEAR(two->f_p, 2.0 * (1.0 - t_central_probability(3.0, 1)), 1e-12);
}

}  // namespace
}  // namespace altgrad::report
