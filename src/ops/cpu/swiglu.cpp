#include "ops/cpu/swiglu.hpp"

#include <cmath>

#include "ops/cpu/parallel.hpp"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cpu {
namespace {

// exp(−a) overflows to Inf for very negative a, which gives sigmoid = 0, not NaN.
template <typename Scalar>
Scalar sigmoid(Scalar a) {
  return Scalar{1} / (Scalar{1} + std::exp(-a));
}

}  // namespace

template <typename Scalar>
void swiglu_forward(std::span<Scalar> out, std::span<const Scalar> inp, std::size_t N, std::size_t H) {
  check_swiglu_forward(out.size(), inp.size(), N, H);
#pragma omp parallel for schedule(static) if (N * H >= kMinParallelWork)
  for (std::size_t row = 0; row < N; ++row) {
    const Scalar* a = inp.data() + row * 2 * H;
    const Scalar* b = a + H;
    Scalar* y = out.data() + row * H;
    for (std::size_t i = 0; i < H; ++i) y[i] = a[i] * sigmoid(a[i]) * b[i];
  }
}

template <typename Scalar>
void swiglu_backward(std::span<Scalar> dinp, std::span<const Scalar> inp, std::span<const Scalar> dout, std::size_t N,
                     std::size_t H) {
  check_swiglu_backward(dinp.size(), inp.size(), dout.size(), N, H);
#pragma omp parallel for schedule(static) if (N * H >= kMinParallelWork)
  for (std::size_t row = 0; row < N; ++row) {
    const Scalar* a = inp.data() + row * 2 * H;
    const Scalar* b = a + H;
    Scalar* da = dinp.data() + row * 2 * H;
    Scalar* db = da + H;
    const Scalar* dy = dout.data() + row * H;
    for (std::size_t i = 0; i < H; ++i) {
      const Scalar s = sigmoid(a[i]);
      // silu'(a) = s + a·s·(1 − s)
      da[i] = dy[i] * b[i] * (s * (Scalar{1} + a[i] * (Scalar{1} - s)));
      db[i] = dy[i] * (a[i] * s);
    }
  }
}

template void swiglu_forward<float>(std::span<float>, std::span<const float>, std::size_t, std::size_t);
template void swiglu_forward<double>(std::span<double>, std::span<const double>, std::size_t, std::size_t);
template void swiglu_backward<float>(std::span<float>, std::span<const float>, std::span<const float>, std::size_t,
                                     std::size_t);
template void swiglu_backward<double>(std::span<double>, std::span<const double>, std::span<const double>, std::size_t,
                                      std::size_t);

}  // namespace altgrad::ops::cpu
