#pragma once
// Token plus position embedding on the GPU; the meaning, shapes and checks of
// ops/cpu/embedding.hpp, and its bits:
//   out[b, t, :] = wte[tokens[b, t], :] + wpe[t, :]
//   tokens (B, T), wte (V, C), wpe (T, C), out (B, T, C); every span in GPU memory
#include <cstddef>
#include <cstdint>
#include <span>

#include "ops/cuda/device_scratch.hpp"
#include "ops/cuda/index_check.hpp"

namespace altgrad::ops::cuda {

// Overwrites out. Throws std::invalid_argument on a size mismatch or a token outside [0, V).
void embedding_forward(std::span<float> out, std::span<const std::int32_t> tokens, std::span<const float> wte,
                       std::span<const float> wpe, std::size_t B, std::size_t T, std::size_t C, std::size_t V,
                       IndexCheck& check);

// Adds dout to dwte at each token's row and its sum over the batch to dwpe. A token that occurs
// several times gets all its gradients, added in (b, t) order; `links` holds the order between
// launches.
void embedding_backward(std::span<float> dwte, std::span<float> dwpe, std::span<const float> dout,
                        std::span<const std::int32_t> tokens, std::size_t B, std::size_t T, std::size_t C,
                        std::size_t V, IndexCheck& check, DeviceScratch& links);

}  // namespace altgrad::ops::cuda
