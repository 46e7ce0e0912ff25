#pragma once
// Entropy of attention distributions: low entropy means a head attends to few keys; a head whose
// entropy collapses toward 0 during low-precision training is a sign of attention collapse.
//
//   probs (B, NH, T, T) row-major: softmax rows of causal attention; row (b, h, t) is the
//   distribution of query t over keys 0..t, and its entries at keys > t are exactly 0.
//
// Entropy of one row, in nats:  H = −Σ_k p_k · ln p_k  over its T entries, with 0 · ln 0 = 0.
// Row t's entropy is at most ln(t + 1) (uniform over its t + 1 visible keys), so the rows of short
// contexts are low by construction and the per-head means below depend on T.
//
// attention_entropy_per_head returns, for each head h, the mean of H over its B·T query rows
// (all batches, all positions). A row with a negative or NaN entry has entropy NaN, which then
// propagates to its head's mean; every head is NaN when B·T = 0.
//
// Deterministic: each (b, h) slice is summed serially by one thread, and the slices of a head are
// merged in batch order.
#include <cstddef>
#include <span>
#include <vector>

namespace altgrad::diag {

// Returns NH per-head mean entropies (nats). Throws std::invalid_argument when probs.size() is not
// B·NH·T·T.
std::vector<double> attention_entropy_per_head(std::span<const float> probs, std::size_t B, std::size_t NH,
                                               std::size_t T);

// Summary of one layer's heads: the mean and the minimum over heads of the per-head means.
struct LayerEntropy {
  double mean = 0;
  double min = 0;
};

// Of attention_entropy_per_head's result. Both fields are NaN for an empty span or when any head is NaN.
LayerEntropy layer_entropy(std::span<const double> per_head);

}  // namespace altgrad::diag
