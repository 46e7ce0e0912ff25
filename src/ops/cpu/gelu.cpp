#include "ops/cpu/gelu.hpp"

#include <cmath>
#include <numbers>

#include "ops/cpu/argument_checks.hpp"
#include "ops/cpu/parallel.hpp"

namespace altgrad::ops::cpu {
namespace {

template <typename Scalar>
constexpr Scalar kInvSqrt2 = Scalar{1} / std::numbers::sqrt2_v<Scalar>;
template <typename Scalar>
constexpr Scalar kInvSqrt2Pi = std::numbers::inv_sqrtpi_v<Scalar> / std::numbers::sqrt2_v<Scalar>;

template <typename Scalar>
Scalar normal_cdf(Scalar x) {
  return Scalar{0.5} * (Scalar{1} + std::erf(x * kInvSqrt2<Scalar>));
}

}  // namespace

template <typename Scalar>
void gelu_forward(std::span<Scalar> out, std::span<const Scalar> inp) {
  require_size("gelu_forward", "out", out.size(), inp.size());
  const std::size_t n = inp.size();
#pragma omp parallel for schedule(static) if (n >= kMinParallelWork)
  for (std::size_t i = 0; i < n; ++i) out[i] = inp[i] * normal_cdf(inp[i]);
}

template <typename Scalar>
void gelu_backward(std::span<Scalar> dinp, std::span<const Scalar> inp, std::span<const Scalar> dout) {
  require_size("gelu_backward", "dinp", dinp.size(), inp.size());
  require_size("gelu_backward", "dout", dout.size(), inp.size());
  const std::size_t n = inp.size();
#pragma omp parallel for schedule(static) if (n >= kMinParallelWork)
  for (std::size_t i = 0; i < n; ++i) {
    const Scalar x = inp[i];
    const Scalar density = kInvSqrt2Pi<Scalar> * std::exp(Scalar{-0.5} * x * x);
    dinp[i] += dout[i] * (normal_cdf(x) + x * density);
  }
}

template void gelu_forward<float>(std::span<float>, std::span<const float>);
template void gelu_forward<double>(std::span<double>, std::span<const double>);
template void gelu_backward<float>(std::span<float>, std::span<const float>, std::span<const float>);
template void gelu_backward<double>(std::span<double>, std::span<const double>, std::span<const double>);

}  // namespace altgrad::ops::cpu
