#include "ops/cpu/gelu.hpp"

#include <cmath>
#include <numbers>
#include <type_traits>

#include "ops/cpu/argument_checks.hpp"
#include "ops/cpu/parallel.hpp"
#include "ops/cpu/vector_math.hpp"

namespace altgrad::ops::cpu {
namespace {

template <typename Scalar>
constexpr Scalar kInvSqrt2 = Scalar{1} / std::numbers::sqrt2_v<Scalar>;
template <typename Scalar>
constexpr Scalar kInvSqrt2Pi = std::numbers::inv_sqrtpi_v<Scalar> / std::numbers::sqrt2_v<Scalar>;

// libm's erff dominated the GELU passes: it is a call GCC cannot vectorize. In float, the loops
// below use exp_float (ops/cpu/vector_math.hpp) and Abramowitz & Stegun 7.1.26 for erf (|error| <=
// 1.5e-7, the approximation PyTorch's vectorized CPU erf also uses): plain arithmetic the compiler
// vectorizes. Double, which gradient checks use, keeps libm.

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
    // Raw pointers: through the spans' operator[], GCC vectorizes the loads as gathers.
    const float* in = inp.data();
    float* o = out.data();
#pragma omp parallel for simd schedule(static) if (n >= kMinParallelWork)
    for (std::size_t i = 0; i < n; ++i) {
      const float x = in[i];
      o[i] = x * normal_cdf_float(x, exp_float(-0.5f * x * x));
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
    const float *in = inp.data(), *dy = dout.data();
    float* dx = dinp.data();
#pragma omp parallel for simd schedule(static) if (n >= kMinParallelWork)
    for (std::size_t i = 0; i < n; ++i) {
      const float x = in[i];
      const float gauss = exp_float(-0.5f * x * x);  // shared by Φ and the density φ
      dx[i] = dy[i] * (normal_cdf_float(x, gauss) + x * kInvSqrt2Pi<float> * gauss);
    }
  } else {
#pragma omp parallel for schedule(static) if (n >= kMinParallelWork)
    for (std::size_t i = 0; i < n; ++i) {
      const Scalar x = inp[i];
      const Scalar density = kInvSqrt2Pi<Scalar> * std::exp(Scalar{-0.5} * x * x);
      dinp[i] = dout[i] * (normal_cdf(x) + x * density);
    }
  }
}

template void gelu_forward<float>(std::span<float>, std::span<const float>);
template void gelu_forward<double>(std::span<double>, std::span<const double>);
template void gelu_backward<float>(std::span<float>, std::span<const float>, std::span<const float>);
template void gelu_backward<double>(std::span<double>, std::span<const double>, std::span<const double>);

}  // namespace altgrad::ops::cpu
