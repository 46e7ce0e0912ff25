#include "ops/cuda/softmax_cross_entropy.hpp"

#include "ops/cuda/cuda_error.cuh"
#include "ops/cuda/lane_group.cuh"
#include "ops/cuda/launch.cuh"
#include "ops/cuda/softmax_math.hpp"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cuda {
namespace {

// One row per group of 16 threads; the leader writes the loss.
__global__ void softmax_cross_entropy_forward_kernel(float* losses, float* probs, const float* logits,
                                                     const std::int32_t* targets, std::size_t N, std::size_t V) {
  const LaneGroup group;
  for (std::size_t row = LaneGroup::index(); row < N; row += LaneGroup::count()) {
    const float* z = logits + row * V;
    const SoftmaxStats stats = softmax_row(group, z, probs + row * V, V);
    if (group.leader()) losses[row] = cross_entropy_loss(stats, z[targets[row]]);
  }
}

// One thread per element.
__global__ void softmax_cross_entropy_backward_kernel(float* dlogits, const float* dlosses, const float* probs,
                                                      const std::int32_t* targets, std::size_t N, std::size_t V) {
  for (std::size_t i = thread_index(); i < N * V; i += grid_threads()) {
    const std::size_t row = i / V, v = i % V;
    dlogits[i] += cross_entropy_gradient(probs[i], v == static_cast<std::size_t>(targets[row]), dlosses[row]);
  }
}

}  // namespace

void softmax_cross_entropy_forward(std::span<float> losses, std::span<float> probs, std::span<const float> logits,
                                   std::span<const std::int32_t> targets, std::size_t N, std::size_t V,
                                   IndexCheck& check) {
  check_softmax_cross_entropy_forward(losses.size(), probs.size(), logits.size(), targets.size(), N, V);
  check.require_below("softmax_cross_entropy_forward", "targets", targets, V);
  if (N == 0) return;

  softmax_cross_entropy_forward_kernel<<<blocks_for(N * kSumLanes), kBlockThreads>>>(
      losses.data(), probs.data(), logits.data(), targets.data(), N, V);
  check_launch("softmax_cross_entropy_forward_kernel");
}

void softmax_cross_entropy_backward(std::span<float> dlogits, std::span<const float> dlosses,
                                    std::span<const float> probs, std::span<const std::int32_t> targets, std::size_t N,
                                    std::size_t V, IndexCheck& check) {
  check_softmax_cross_entropy_backward(dlogits.size(), dlosses.size(), probs.size(), targets.size(), N, V);
  check.require_below("softmax_cross_entropy_backward", "targets", targets, V);
  if (dlogits.empty()) return;

  softmax_cross_entropy_backward_kernel<<<blocks_for(N * V), kBlockThreads>>>(dlogits.data(), dlosses.data(),
                                                                              probs.data(), targets.data(), N, V);
  check_launch("softmax_cross_entropy_backward_kernel");
}

}  // namespace altgrad::ops::cuda
