#include "ops/cuda/embedding.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "ops/cuda/cuda_error.cuh"
#include "ops/cuda/launch.cuh"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cuda {
namespace {

// out (B·T, C): one thread per element.
__global__ void embedding_forward_kernel(float* out, const std::int32_t* tokens, const float* wte, const float* wpe,
                                         std::size_t BT, std::size_t T, std::size_t C) {
  for (std::size_t i = thread_index(); i < BT * C; i += grid_threads()) {
    const std::size_t bt = i / C, c = i % C;
    out[i] = wte[static_cast<std::size_t>(tokens[bt]) * C + c] + wpe[bt % T * C + c];
  }
}

// dwte's scatter without atomics, in the CPU's order. A row of dwte gets the rows of dout of every
// position that holds its token, in (b, t) order: the positions of one token are a chain, from its
// first occurrence (the head) through next[]. One thread per position finds its successor and
// whether it heads a chain, by a scan of the tokens (B·T reads of cached memory each).
__global__ void link_repeated_tokens_kernel(std::int32_t* next, std::int32_t* is_head, const std::int32_t* tokens,
                                            std::size_t BT) {
  for (std::size_t p = thread_index(); p < BT; p += grid_threads()) {
    const std::int32_t token = tokens[p];
    std::int32_t successor = -1;
    for (std::size_t q = p + 1; q < BT; ++q) {
      if (tokens[q] == token) {
        successor = static_cast<std::int32_t>(q);
        break;
      }
    }
    bool head = true;
    for (std::size_t q = 0; q < p && head; ++q) head = tokens[q] != token;
    next[p] = successor;
    is_head[p] = head ? 1 : 0;
  }
}

// One thread per (head position, channel): walks the chain and adds its rows into dwte in order.
__global__ void embedding_token_backward_kernel(float* dwte, const float* dout, const std::int32_t* tokens,
                                                const std::int32_t* next, const std::int32_t* is_head, std::size_t BT,
                                                std::size_t C) {
  for (std::size_t i = thread_index(); i < BT * C; i += grid_threads()) {
    const std::size_t head = i / C, c = i % C;
    if (is_head[head] == 0) continue;
    float* dtoken = dwte + static_cast<std::size_t>(tokens[head]) * C + c;
    float sum = *dtoken;
    for (std::int32_t p = static_cast<std::int32_t>(head); p >= 0; p = next[p])
      sum += dout[static_cast<std::size_t>(p) * C + c];
    *dtoken = sum;
  }
}

// dwpe (T, C): one thread per element adds the batch in order.
__global__ void embedding_position_backward_kernel(float* dwpe, const float* dout, std::size_t B, std::size_t T,
                                                   std::size_t C) {
  for (std::size_t i = thread_index(); i < T * C; i += grid_threads()) {
    float sum = dwpe[i];
    for (std::size_t b = 0; b < B; ++b) sum += dout[b * T * C + i];
    dwpe[i] = sum;
  }
}

}  // namespace

void embedding_forward(std::span<float> out, std::span<const std::int32_t> tokens, std::span<const float> wte,
                       std::span<const float> wpe, std::size_t B, std::size_t T, std::size_t C, std::size_t V,
                       IndexCheck& check) {
  check_embedding_forward(out.size(), tokens.size(), wte.size(), wpe.size(), B, T, C, V);
  check.require_below("embedding_forward", "tokens", tokens, V);
  if (out.empty()) return;

  embedding_forward_kernel<<<blocks_for(out.size()), kBlockThreads>>>(out.data(), tokens.data(), wte.data(), wpe.data(),
                                                                      B * T, T, C);
  check_launch("embedding_forward_kernel");
}

void embedding_backward(std::span<float> dwte, std::span<float> dwpe, std::span<const float> dout,
                        std::span<const std::int32_t> tokens, std::size_t B, std::size_t T, std::size_t C,
                        std::size_t V, IndexCheck& check, DeviceScratch& links) {
  constexpr const char* kernel = "embedding_backward";
  check_embedding_backward(dwte.size(), dwpe.size(), dout.size(), tokens.size(), B, T, C, V);
  check.require_below(kernel, "tokens", tokens, V);
  if (dout.empty()) return;
  if (B * T > static_cast<std::size_t>(INT32_MAX)) {
    throw std::invalid_argument(std::string(kernel) + ": B·T = " + std::to_string(B * T) +
                                " positions exceed the int32 links between repeated tokens");
  }

  const std::size_t BT = B * T;
  auto* next = static_cast<std::int32_t*>(links.bytes(2 * BT * sizeof(std::int32_t)));
  std::int32_t* is_head = next + BT;
  link_repeated_tokens_kernel<<<blocks_for(BT), kBlockThreads>>>(next, is_head, tokens.data(), BT);
  check_launch("link_repeated_tokens_kernel");
  embedding_token_backward_kernel<<<blocks_for(BT * C), kBlockThreads>>>(dwte.data(), dout.data(), tokens.data(), next,
                                                                         is_head, BT, C);
  check_launch("embedding_token_backward_kernel");
  embedding_position_backward_kernel<<<blocks_for(T * C), kBlockThreads>>>(dwpe.data(), dout.data(), B, T, C);
  check_launch("embedding_position_backward_kernel");
}

}  // namespace altgrad::ops::cuda
