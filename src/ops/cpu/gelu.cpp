#include "ops/cpu/gelu.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>
#include <type_traits>

#include "ops/cpu/parallel.hpp"
#include "ops/cpu/vector_math.hpp"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cpu {
namespace {

template <typename Scalar>
constexpr Scalar kInvSqrt2 = Scalar{1} / std::numbers::sqrt2_v<Scalar>;
template <typename Scalar>
constexpr Scalar kInvSqrt2Pi = std::numbers::inv_sqrtpi_v<Scalar> / std::numbers::sqrt2_v<Scalar>;

// libm's erff dominated the GELU passes: it is a call GCC cannot vectorize. In float, the loops
// below use exp_lanes (ops/cpu/vector_math.hpp) and Abramowitz & Stegun 7.1.26 for erf (|error| <=
// 1.5e-7, the approximation PyTorch's vectorized CPU erf also uses): plain arithmetic, one
// definition for a float and for a register of lanes (PieceLanes), each lane with the float's bits.
// The loops go a register at a time by hand: left to `omp simd`, GCC ran most elements through a
// scalar copy of the loop. Double, which gradient checks use, keeps libm.

// Φ(x) given e^(−x²/2), by erf(|x|/√2) = 1 − poly(t)·e^(−x²/2), t = 1/(1 + p·|x|/√2).
template <typename F>
F normal_cdf_lanes(F x, F gauss) {
  F magnitude;
  if constexpr (std::is_same_v<F, float>) {
    magnitude = std::fabs(x);
  } else {
    magnitude = std::bit_cast<F>(std::bit_cast<PieceIntLanes>(x) & 0x7FFF'FFFF);
  }
  const F z = magnitude * kInvSqrt2<float>;
  const F t = 1.0f / (1.0f + 0.3275911f * z);
  const F poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const F erf_abs = 1.0f - poly * gauss;
  return 0.5f * (1.0f + (x < 0.0f ? -erf_abs : erf_abs));
}

// body(i, at) for the elements from i: `at` reads a register of lanes (AtPiece) for each whole one,
// then one float (AtIndex) for each left over. Elementwise, so any split gives the same bits.
template <typename Body>
void for_each_lanes(std::size_t n, Body&& body) {
  const std::size_t pieces = n / kPieceLanes;
#pragma omp parallel for schedule(static) if (n >= kMinParallelWork)
  for (std::size_t p = 0; p < pieces; ++p) body(p * kPieceLanes, AtPiece{p * kPieceLanes});
  for (std::size_t i = pieces * kPieceLanes; i < n; ++i) body(i, AtIndex{i});
}

template <typename F>
void store_lanes(float* out, F v) {
  std::memcpy(out, &v, sizeof v);
}

template <typename Scalar>
Scalar normal_cdf(Scalar x) {
  return Scalar{0.5} * (Scalar{1} + std::erf(x * kInvSqrt2<Scalar>));
}

}  // namespace

template <typename Scalar>
void gelu_forward(std::span<Scalar> out, std::span<const Scalar> inp) {
  check_gelu_forward(out.size(), inp.size());
  const std::size_t n = inp.size();
  if constexpr (std::is_same_v<Scalar, float>) {
    const float* in = inp.data();
    float* o = out.data();
    for_each_lanes(n, [&](std::size_t i, auto at) {
      const auto x = at(in);
      store_lanes(o + i, x * normal_cdf_lanes(x, exp_lanes(-0.5f * x * x)));
    });
  } else {
#pragma omp parallel for schedule(static) if (n >= kMinParallelWork)
    for (std::size_t i = 0; i < n; ++i) out[i] = inp[i] * normal_cdf(inp[i]);
  }
}

template <typename Scalar>
void gelu_backward(std::span<Scalar> dinp, std::span<const Scalar> inp, std::span<const Scalar> dout) {
  check_gelu_backward(dinp.size(), inp.size(), dout.size());
  const std::size_t n = inp.size();
  if constexpr (std::is_same_v<Scalar, float>) {
    const float *in = inp.data(), *dy = dout.data();
    float* dx = dinp.data();
    for_each_lanes(n, [&](std::size_t i, auto at) {
      const auto x = at(in);
      const auto gauss = exp_lanes(-0.5f * x * x);  // shared by Φ and the density φ
      store_lanes(dx + i, at(dy) * (normal_cdf_lanes(x, gauss) + x * kInvSqrt2Pi<float> * gauss));
    });
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
