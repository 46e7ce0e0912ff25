#include "ops/cpu/softmax_cross_entropy.hpp"

#include <algorithm>
#include <cmath>

#include "ops/argument_checks.hpp"
#include "ops/cpu/parallel.hpp"
#include "ops/cpu/softmax_row.hpp"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cpu {

template <typename Scalar>
void softmax_cross_entropy_forward(std::span<Scalar> losses, std::span<Scalar> probs, std::span<const Scalar> logits,
                                   std::span<const std::int32_t> targets, std::size_t N, std::size_t V) {
  check_softmax_cross_entropy_forward(losses.size(), probs.size(), logits.size(), targets.size(), N, V);
  require_indices_below("softmax_cross_entropy_forward", "targets", targets, V);

#pragma omp parallel for schedule(static) if (N * V >= kMinParallelWork)
  for (std::size_t row = 0; row < N; ++row) {
    const Scalar* z = logits.data() + row * V;
    Scalar* p = probs.data() + row * V;
    const SoftmaxRow<Scalar> row_softmax = softmax_row(z, p, V);
    // logsumexp(z) − z[target], both sides shifted by the maximum.
    losses[row] = std::log(row_softmax.sum) - (z[targets[row]] - row_softmax.max);
  }
}

template <typename Scalar>
void softmax_cross_entropy_backward(std::span<Scalar> dlogits, std::span<const Scalar> dlosses,
                                    std::span<const Scalar> probs, std::span<const std::int32_t> targets, std::size_t N,
                                    std::size_t V) {
  check_softmax_cross_entropy_backward(dlogits.size(), dlosses.size(), probs.size(), targets.size(), N, V);
  require_indices_below("softmax_cross_entropy_backward", "targets", targets, V);

#pragma omp parallel for schedule(static) if (N * V >= kMinParallelWork)
  for (std::size_t row = 0; row < N; ++row) {
    const Scalar* p = probs.data() + row * V;
    Scalar* dz = dlogits.data() + row * V;
    const Scalar dloss = dlosses[row];
    const auto target = static_cast<std::size_t>(targets[row]);
    for (std::size_t v = 0; v < V; ++v) dz[v] += (p[v] - (v == target ? Scalar{1} : Scalar{0})) * dloss;
  }
}

template void softmax_cross_entropy_forward<float>(std::span<float>, std::span<float>, std::span<const float>,
                                                   std::span<const std::int32_t>, std::size_t, std::size_t);
template void softmax_cross_entropy_forward<double>(std::span<double>, std::span<double>, std::span<const double>,
                                                    std::span<const std::int32_t>, std::size_t, std::size_t);
template void softmax_cross_entropy_backward<float>(std::span<float>, std::span<const float>, std::span<const float>,
                                                    std::span<const std::int32_t>, std::size_t, std::size_t);
template void softmax_cross_entropy_backward<double>(std::span<double>, std::span<const double>,
                                                     std::span<const double>, std::span<const std::int32_t>,
                                                     std::size_t, std::size_t);

}  // namespace altgrad::ops::cpu
