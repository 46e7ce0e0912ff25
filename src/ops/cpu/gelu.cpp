#include "ops/cpu/gelu.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <type_traits>

#include "ops/cpu/argument_checks.hpp"
#include "ops/cpu/parallel.hpp"

namespace altgrad::ops::cpu {
namespace {

template <typename Scalar>
constexpr Scalar kInvSqrt2 = Scalar{1} / std::numbers::sqrt2_v<Scalar>;
template <typename Scalar>
constexpr Scalar kInvSqrt2Pi = std::numbers::inv_sqrtpi_v<Scalar> / std::numbers::sqrt2_v<Scalar>;

// libm's erff and expf are calls GCC cannot vectorize, and erf dominated the GELU passes. In float,
// the loops below use exp_float and Abramowitz & Stegun 7.1.26 for erf (|error| <= 1.5e-7, the
// approximation PyTorch's vectorized CPU erf also uses): both are plain arithmetic the compiler
// vectorizes. Double, which gradient checks use, keeps libm.

// e^x for x in [-87, 88] (clamped there), relative error below 3e-7: 2^n by the exponent bits times
// e^(f·ln 2), |f| <= 1/2, from its Taylor series to degree 7.
inline float exp_float(float x) {
  x = std::min(std::max(x, -87.0f), 88.0f);
  const float t = x * std::numbers::log2e_v<float>;
  constexpr float kRound = 12582912.0f;  // 1.5·2^23: adding and subtracting it rounds to an integer
  const float n = (t + kRound) - kRound;
  const float u = (t - n) * std::numbers::ln2_v<float>;
  float p = 1.0f + u / 7.0f;
  p = 1.0f + u / 6.0f * p;
  p = 1.0f + u / 5.0f * p;
  p = 1.0f + u / 4.0f * p;
  p = 1.0f + u / 3.0f * p;
  p = 1.0f + u / 2.0f * p;
  p = 1.0f + u * p;
  const auto exponent = static_cast<std::uint32_t>(static_cast<std::int32_t>(n) + 127) << 23;
  return p * std::bit_cast<float>(exponent);
}

// Φ(x) given e^(−x²/2), by erf(|x|/√2) = 1 − poly(t)·e^(−x²/2), t = 1/(1 + p·|x|/√2).
inline float normal_cdf_float(float x, float gauss) {
  const float z = std::fabs(x) * kInvSqrt2<float>;
  const float t = 1.0f / (1.0f + 0.3275911f * z);
  const float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const float erf_abs = 1.0f - poly * gauss;
  return 0.5f * (1.0f + (x < 0.0f ? -erf_abs : erf_abs));
}

template <typename Scalar>
Scalar normal_cdf(Scalar x) {
  return Scalar{0.5} * (Scalar{1} + std::erf(x * kInvSqrt2<Scalar>));
}

}  // namespace

template <typename Scalar>
void gelu_forward(std::span<Scalar> out, std::span<const Scalar> inp) {
  require_size("gelu_forward", "out", out.size(), inp.size());
  const std::size_t n = inp.size();
  if constexpr (std::is_same_v<Scalar, float>) {
#pragma omp parallel for simd schedule(static) if (n >= kMinParallelWork)
    for (std::size_t i = 0; i < n; ++i) {
      const float x = inp[i];
      out[i] = x * normal_cdf_float(x, exp_float(-0.5f * x * x));
    }
  } else {
#pragma omp parallel for schedule(static) if (n >= kMinParallelWork)
    for (std::size_t i = 0; i < n; ++i) out[i] = inp[i] * normal_cdf(inp[i]);
  }
}

template <typename Scalar>
void gelu_backward(std::span<Scalar> dinp, std::span<const Scalar> inp, std::span<const Scalar> dout) {
  require_size("gelu_backward", "dinp", dinp.size(), inp.size());
  require_size("gelu_backward", "dout", dout.size(), inp.size());
  const std::size_t n = inp.size();
  if constexpr (std::is_same_v<Scalar, float>) {
#pragma omp parallel for simd schedule(static) if (n >= kMinParallelWork)
    for (std::size_t i = 0; i < n; ++i) {
      const float x = inp[i];
      const float gauss = exp_float(-0.5f * x * x);  // shared by Φ and the density φ
      dinp[i] += dout[i] * (normal_cdf_float(x, gauss) + x * kInvSqrt2Pi<float> * gauss);
    }
  } else {
#pragma omp parallel for schedule(static) if (n >= kMinParallelWork)
    for (std::size_t i = 0; i < n; ++i) {
      const Scalar x = inp[i];
      const Scalar density = kInvSqrt2Pi<Scalar> * std::exp(Scalar{-0.5} * x * x);
      dinp[i] += dout[i] * (normal_cdf(x) + x * density);
    }
  }
}

template void gelu_forward<float>(std::span<float>, std::span<const float>);
template void gelu_forward<double>(std::span<double>, std::span<const double>);
template void gelu_backward<float>(std::span<float>, std::span<const float>, std::span<const float>);
template void gelu_backward<double>(std::span<double>, std::span<const double>, std::span<const double>);

}  // namespace altgrad::ops::cpu
