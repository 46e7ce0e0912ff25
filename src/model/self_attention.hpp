#pragma once
// The attention core as the model runs it: the place where its four operands (matmul_points.hpp)
// meet the hooks (matmul_hooks.hpp) on their way to the backend's kernels (ops/kernels.hpp).
//
//   qkv (B, T, 3C) rows [q | k | v], probs (B, NH, T, T), out (B, T, C)
//
// q, k and v are each described to a hook as one (B·T, C) matrix. They lie interleaved in qkv, so
// an active one is gathered into contiguous scratch, hooked into a second scratch, and scattered
// into a copy of qkv whose other thirds are the originals. probs is described as (B·NH·T, T): the
// softmax runs first, the hook rewrites its output into a copy, and the copy multiplies v.
//
// Each operand is described with the axis its forward product reduces over: q and k along each
// head's hs channels (runs of hs within a row), v down the key positions of each sequence (runs of
// T rows), probs along its keys. Straight-through estimator: the backward pass
// differentiates the products at operands from self_attention_backward_operands (the forward's,
// or new copies along the backward products' axes where the hook's copy depends on the axis), and
// the softmax at the probabilities it produced (Kernels::attention_backward with AttentionOperands).
#include <cstddef>
#include <span>

#include "model/matmul_hooks.hpp"
#include "model/matmul_points.hpp"
#include "ops/kernels.hpp"
#include "ops/memory.hpp"

namespace altgrad::model {

// Where the hooks' attention operands go; all may be empty when hooks is null. They and the
// operands lie in `memory` (the backend's), through which the copies between them are made.
template <typename Scalar>
struct AttentionCopies {
  ops::Memory* memory;
  std::span<Scalar> qkv;           // (B, T, 3C) hooked q, k, v side by side
  std::span<Scalar> probs;         // (B, NH, T, T) hooked probabilities
  std::span<Scalar> third;         // (B·T, C) scratch: one of q, k, v gathered, the hook's input
  std::span<Scalar> third_hooked;  // (B·T, C) scratch: the hook's output, before it is scattered
};

// The attention shape of one batch: B sequences of T positions, C channels in NH heads.
using ops::AttentionShape;

// Overwrites out and probs (always the softmax as computed, which the backward pass needs). Asks
// the hooks about h.{layer}.attn.q, .k, .v, then .probs, applying each active one as it comes.
// Returns what the products multiplied: qkv or copies.qkv, probs or copies.probs. Throws
// std::logic_error when an active point finds no room in copies.
template <typename Scalar>
ops::AttentionOperands<Scalar> self_attention_forward(ops::Kernels<Scalar>& kernels, std::span<Scalar> out,
                                                      std::span<Scalar> probs, std::span<const Scalar> qkv,
                                                      const AttentionCopies<Scalar>& copies, const MatmulPoints& points,
                                                      std::size_t layer, MatmulHooks<Scalar>* hooks,
                                                      const AttentionShape& shape);

// The operands the backward products read: for each of q, k, v, probs that is active and whose
// hook is axis dependent, a new copy from qkv (B, T, 3C) and probs (as the softmax produced them)
// along the backward product's reduction axis — q and k down the positions of each sequence
// (dk = dscoresᵀ·q, dq = dscores·k), v along each head's channels (dprobs = dy·vᵀ), probs down the
// query positions (dv = probsᵀ·dy); for the others the forward's (`used`). copies are the
// backward's own room (copies.qkv, copies.probs) and the same gather scratch as the forward's.
template <typename Scalar>
ops::AttentionOperands<Scalar> self_attention_backward_operands(
    const ops::AttentionOperands<Scalar>& used, std::span<const Scalar> qkv, std::span<const Scalar> probs,
    const AttentionCopies<Scalar>& copies, const MatmulPoints& points, std::size_t layer, MatmulHooks<Scalar>* hooks,
    const AttentionShape& shape);

}  // namespace altgrad::model
