#pragma once
// Token plus position embedding, nanoGPT's wte(idx) + wpe(pos):
//   out[b, t, :] = wte[tokens[b, t], :] + wpe[t, :]
//
//   tokens (B, T)   token ids in [0, V)
//   wte    (V, C)   token embedding; tied to the LM head in nanoGPT
//   wpe    (T, C)   the first T rows of the (block_size, C) position table
//   out    (B, T, C)
#include <cstddef>
#include <cstdint>
#include <span>

namespace altgrad::ops::cpu {

// Overwrites out. Throws std::invalid_argument on a size mismatch or a token outside [0, V).
template <typename Scalar>
void embedding_forward(std::span<Scalar> out, std::span<const std::int32_t> tokens, std::span<const Scalar> wte,
                       std::span<const Scalar> wpe, std::size_t B, std::size_t T, std::size_t C, std::size_t V);

// Scatters dout into dwte (V, C) at each token's row, and adds its sum over the batch to dwpe (T, C).
// A token that occurs several times gets all its gradients, added in (b, t) order.
template <typename Scalar>
void embedding_backward(std::span<Scalar> dwte, std::span<Scalar> dwpe, std::span<const Scalar> dout,
                        std::span<const std::int32_t> tokens, std::size_t B, std::size_t T, std::size_t C,
                        std::size_t V);

}  // namespace altgrad::ops::cpu
