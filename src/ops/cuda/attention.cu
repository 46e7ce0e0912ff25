#include "ops/cuda/attention.hpp"

#include "ops/cuda/attention_math.hpp"
#include "ops/cuda/cuda_error.cuh"
#include "ops/cuda/lane_group.cuh"
#include "ops/cuda/launch.cuh"
#include "ops/cuda/softmax_math.hpp"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cuda {
namespace {

// The dimensions every kernel below takes: hs = C / NH, and qkv's row stride 3C.
struct Heads {
  std::size_t B, T, C, NH, hs;
};

// (b, h, t, s) of element i of a (B, NH, T, T) tensor; (b, t, h, j) of element i of a (B, T, C) one.
struct ProbsIndex {
  std::size_t bh, b, h, t, s;
};
__device__ ProbsIndex probs_index(std::size_t i, const Heads& d) {
  const std::size_t bh = i / (d.T * d.T);
  return {bh, bh / d.NH, bh % d.NH, i / d.T % d.T, i % d.T};
}
struct ChannelIndex {
  std::size_t b, t, h, j;
};
__device__ ChannelIndex channel_index(std::size_t i, const Heads& d) {
  const std::size_t c = i % d.C;
  return {i / (d.T * d.C), i / d.C % d.T, c / d.hs, c % d.hs};
}

// probs[b, h, t, s] = q_t · k_s / √hs for s <= t, 0 beyond; the softmax follows in place.
__global__ void attention_scores_kernel(float* probs, const float* qkv, Heads d) {
  const float scale = attention_scale(d.hs);
  for (std::size_t i = thread_index(); i < d.B * d.NH * d.T * d.T; i += grid_threads()) {
    const ProbsIndex at = probs_index(i, d);
    const float* q = qkv + (at.b * d.T + at.t) * 3 * d.C + at.h * d.hs;
    const float* k = qkv + (at.b * d.T + at.s) * 3 * d.C + d.C + at.h * d.hs;
    probs[i] = at.s <= at.t ? attention_score(q, k, d.hs, scale) : 0.0f;
  }
}

// One row (b, h, t) per group of 16 threads: the softmax over keys 0..t in place.
__global__ void attention_softmax_kernel(float* probs, Heads d) {
  const LaneGroup group;
  for (std::size_t row = LaneGroup::index(); row < d.B * d.NH * d.T; row += LaneGroup::count()) {
    float* p = probs + row * d.T;
    softmax_row(group, p, p, row % d.T + 1);
  }
}

// out[b, t, h·hs + j] = Σ_s probs[b, h, t, s] · v[b, s, h·hs + j].
__global__ void attention_values_kernel(float* out, const float* probs, const float* qkv, Heads d) {
  for (std::size_t i = thread_index(); i < d.B * d.T * d.C; i += grid_threads()) {
    const ChannelIndex at = channel_index(i, d);
    const float* p = probs + ((at.b * d.NH + at.h) * d.T + at.t) * d.T;
    const float* v = qkv + at.b * d.T * 3 * d.C + 2 * d.C + at.h * d.hs + at.j;
    out[i] = attention_value(p, v, 3 * d.C, at.t, d.T);
  }
}

// dprobs[b, h, t, s] = dout_t · v_s for s <= t, 0 beyond; the softmax's backward pass follows.
__global__ void attention_dprobs_kernel(float* dprobs, const float* dout, const float* qkv, Heads d) {
  for (std::size_t i = thread_index(); i < d.B * d.NH * d.T * d.T; i += grid_threads()) {
    const ProbsIndex at = probs_index(i, d);
    const float* dy = dout + (at.b * d.T + at.t) * d.C + at.h * d.hs;
    const float* v = qkv + (at.b * d.T + at.s) * 3 * d.C + 2 * d.C + at.h * d.hs;
    dprobs[i] = at.s <= at.t ? attention_dprob(dy, v, d.hs) : 0.0f;
  }
}

// One row (b, h, t) per group of 16 threads: d loss / d probs into d loss / d scores, in place.
__global__ void attention_softmax_backward_kernel(float* dprobs, const float* probs, Heads d) {
  const LaneGroup group;
  const float scale = attention_scale(d.hs);
  for (std::size_t row = LaneGroup::index(); row < d.B * d.NH * d.T; row += LaneGroup::count()) {
    attention_softmax_backward_row(group, dprobs + row * d.T, probs + row * d.T, row % d.T, d.T, scale);
  }
}

// dq[b, t, h·hs + j] = Σ_s dscores[b, h, t, s] · k[b, s, h·hs + j].
__global__ void attention_dquery_kernel(float* dqkv, const float* dscores, const float* qkv, Heads d) {
  for (std::size_t i = thread_index(); i < d.B * d.T * d.C; i += grid_threads()) {
    const ChannelIndex at = channel_index(i, d);
    const float* ds = dscores + ((at.b * d.NH + at.h) * d.T + at.t) * d.T;
    const float* k = qkv + at.b * d.T * 3 * d.C + d.C + at.h * d.hs + at.j;
    dqkv[(at.b * d.T + at.t) * 3 * d.C + at.h * d.hs + at.j] = attention_dquery(ds, k, 3 * d.C, at.t, d.T);
  }
}

// For key s: dk[b, s, h·hs + j] = Σ_t dscores[b, h, t, s] · q[b, t, h·hs + j] and
// dv[b, s, h·hs + j] = Σ_t used_probs[b, h, t, s] · dout[b, t, h·hs + j].
__global__ void attention_dkey_dvalue_kernel(float* dqkv, const float* dscores, const float* used_probs,
                                             const float* qkv, const float* dout, Heads d) {
  for (std::size_t i = thread_index(); i < d.B * d.T * d.C; i += grid_threads()) {
    const ChannelIndex at = channel_index(i, d);
    const std::size_t s = at.t;
    const std::size_t column = (at.b * d.NH + at.h) * d.T * d.T + s;
    const float* q = qkv + at.b * d.T * 3 * d.C + at.h * d.hs + at.j;
    const float* dy = dout + at.b * d.T * d.C + at.h * d.hs + at.j;
    float* dk = dqkv + (at.b * d.T + s) * 3 * d.C + d.C + at.h * d.hs + at.j;
    *dk = attention_key_gradient(dscores + column, d.T, q, 3 * d.C, s);
    dk[d.C] = attention_key_gradient(used_probs + column, d.T, dy, d.C, s);
  }
}

// The dimensions, once check_attention_* has found NH dividing C.
Heads heads(std::size_t B, std::size_t T, std::size_t C, std::size_t NH) { return {B, T, C, NH, C / NH}; }

void launch_probs(float* probs, const float* qkv, const Heads& d) {
  attention_scores_kernel<<<blocks_for(d.B * d.NH * d.T * d.T), kBlockThreads>>>(probs, qkv, d);
  check_launch("attention_scores_kernel");
  attention_softmax_kernel<<<blocks_for(d.B * d.NH * d.T * kSumLanes), kBlockThreads>>>(probs, d);
  check_launch("attention_softmax_kernel");
}

void launch_values(float* out, const float* probs, const float* qkv, const Heads& d) {
  attention_values_kernel<<<blocks_for(d.B * d.T * d.C), kBlockThreads>>>(out, probs, qkv, d);
  check_launch("attention_values_kernel");
}

}  // namespace

void attention_forward(std::span<float> out, std::span<float> probs, std::span<const float> qkv, std::size_t B,
                       std::size_t T, std::size_t C, std::size_t NH) {
  check_attention_forward(out.size(), probs.size(), qkv.size(), B, T, C, NH);
  const Heads d = heads(B, T, C, NH);
  if (B == 0) return;

  launch_probs(probs.data(), qkv.data(), d);
  launch_values(out.data(), probs.data(), qkv.data(), d);
}

void attention_probs_forward(std::span<float> probs, std::span<const float> qkv, std::size_t B, std::size_t T,
                             std::size_t C, std::size_t NH) {
  check_attention_probs_forward(probs.size(), qkv.size(), B, T, C, NH);
  const Heads d = heads(B, T, C, NH);
  if (B == 0) return;

  launch_probs(probs.data(), qkv.data(), d);
}

void attention_values_forward(std::span<float> out, std::span<const float> probs, std::span<const float> qkv,
                              std::size_t B, std::size_t T, std::size_t C, std::size_t NH) {
  check_attention_values_forward(out.size(), probs.size(), qkv.size(), B, T, C, NH);
  const Heads d = heads(B, T, C, NH);
  if (B == 0) return;

  launch_values(out.data(), probs.data(), qkv.data(), d);
}

void attention_backward(std::span<float> dqkv, std::span<float> dprobs, std::span<const float> dout,
                        const AttentionOperands<float>& used, std::span<const float> probs, std::size_t B,
                        std::size_t T, std::size_t C, std::size_t NH) {
  check_attention_backward(dqkv.size(), dprobs.size(), dout.size(), used.qkv.size(), used.probs.size(), probs.size(), B,
                           T, C, NH);
  const Heads d = heads(B, T, C, NH);
  if (B == 0) return;

  attention_dprobs_kernel<<<blocks_for(B * NH * T * T), kBlockThreads>>>(dprobs.data(), dout.data(), used.qkv.data(),
                                                                         d);
  check_launch("attention_dprobs_kernel");
  attention_softmax_backward_kernel<<<blocks_for(B * NH * T * kSumLanes), kBlockThreads>>>(dprobs.data(), probs.data(),
                                                                                           d);
  check_launch("attention_softmax_backward_kernel");
  attention_dquery_kernel<<<blocks_for(B * T * C), kBlockThreads>>>(dqkv.data(), dprobs.data(), used.qkv.data(), d);
  check_launch("attention_dquery_kernel");
  attention_dkey_dvalue_kernel<<<blocks_for(B * T * C), kBlockThreads>>>(dqkv.data(), dprobs.data(), used.probs.data(),
                                                                         used.qkv.data(), dout.data(), d);
  check_launch("attention_dkey_dvalue_kernel");
}

}  // namespace altgrad::ops::cuda
