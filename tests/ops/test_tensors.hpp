#pragma once
// Random inputs and element-wise comparisons for the ops tests.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/bit_identical.hpp"

namespace altgrad::ops_test {

using test_support::bit_identical;

// Uniform values in [lo, hi), each exactly representable as a float, so a float and a double run
// of a kernel see the same inputs and only the arithmetic differs.
inline std::vector<double> random_values(std::size_t n, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::vector<double> values(n);
  for (double& v : values) v = static_cast<float>(uniform(generator));
  return values;
}

inline std::vector<std::int32_t> random_tokens(std::size_t n, std::size_t vocabulary, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::uniform_int_distribution<std::int32_t> uniform(0, static_cast<std::int32_t>(vocabulary) - 1);
  std::vector<std::int32_t> tokens(n);
  for (std::int32_t& t : tokens) t = uniform(generator);
  return tokens;
}

template <typename Scalar>
std::vector<Scalar> converted(const std::vector<double>& values) {
  return std::vector<Scalar>(values.begin(), values.end());
}

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

// |got − want| ≤ abs + rel · |want|, element by element (numpy.allclose).
struct Tolerance {
  double abs;
  double rel;
};

// Forward results against a reference computed in double on the same inputs.
template <typename Scalar>
constexpr Tolerance kReferenceTolerance = sizeof(Scalar) == 4 ? Tolerance{1e-6, 1e-5} : Tolerance{1e-13, 1e-12};

// On failure, the message names the tensor, counts the bad elements and shows the worst one.
template <typename A, typename B>
::testing::AssertionResult all_close(const std::string& name, const std::vector<A>& got, const std::vector<B>& want,
                                     Tolerance tolerance) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << name << ": " << got.size() << " elements, expected " << want.size();
  }
  std::size_t bad = 0;
  std::size_t worst = 0;
  double worst_excess = 0;  // |got − want| / allowed; Inf for NaN or a nonzero error where none is allowed
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]);
    const double w = static_cast<double>(want[i]);
    const double error = std::fabs(g - w);
    const double allowed = tolerance.abs + tolerance.rel * std::fabs(w);
    if (error <= allowed) continue;  // false for NaN
    ++bad;
    const double excess = (std::isnan(error) || allowed == 0) ? INFINITY : error / allowed;
    if (bad == 1 || excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  const double g = static_cast<double>(got[worst]);
  const double w = static_cast<double>(want[worst]);
  std::ostringstream message;
  message.precision(17);
  message << name << ": " << bad << " of " << got.size() << " elements out of tolerance (abs " << tolerance.abs
          << ", rel " << tolerance.rel << "); worst at [" << worst << "]: got " << g << ", want " << w << ", error "
          << std::fabs(g - w) << " = " << worst_excess << " x allowed";
  return ::testing::AssertionFailure() << message.str();
}

// A kernel's outputs or gradients by name, so the generic checks below can walk all of them.
template <typename Scalar>
using Tensors = std::map<std::string, std::vector<Scalar>>;

template <typename A, typename B>
::testing::AssertionResult all_close(const Tensors<A>& got, const Tensors<B>& want, Tolerance tolerance) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "different tensor sets";
  for (const auto& [name, values] : got) {
    const auto it = want.find(name);
    if (it == want.end()) return ::testing::AssertionFailure() << name << " missing";
    if (auto result = all_close(name, values, it->second, tolerance); !result) return result;
  }
  return ::testing::AssertionSuccess();
}

// Every tensor of a bit for bit as in b; a failure names the tensor.
template <typename Scalar>
::testing::AssertionResult bit_identical(const Tensors<Scalar>& a, const Tensors<Scalar>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "different tensor sets";
  for (const auto& [name, values] : a) {
    const auto it = b.find(name);
    if (it == b.end()) return ::testing::AssertionFailure() << name << " missing";
    if (auto result = test_support::bit_identical(values, it->second); !result) return result << " (" << name << ")";
  }
  return ::testing::AssertionSuccess();
}

inline Tensors<double> scaled(Tensors<double> tensors, double factor) {
  for (auto& [name, values] : tensors) {
    for (double& v : values) v *= factor;
  }
  return tensors;
}

// What a kernel produced from one forward and one or more backward calls.
template <typename Scalar>
struct Pass {
  Tensors<Scalar> outputs;
  Tensors<Scalar> gradients;
};

}  // namespace altgrad::ops_test
