#pragma once
// The numerically stable softmax of one row, shared by attention and the cross-entropy head.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "ops/cpu/vector_math.hpp"

namespace altgrad::ops::cpu {

template <typename Scalar>
struct SoftmaxRow {
  Scalar max;  // the row's largest input, subtracted before exp so it cannot overflow
  Scalar sum;  // Σ exp(in − max); logsumexp(in) = log(sum) + max
};

// out[i] = exp(in[i] − max) / sum over n >= 1 inputs; out may be in. `room` (the float row's, below)
// is ignored: the double reference reads and writes [0, n) alone.
template <typename Scalar>
SoftmaxRow<Scalar> softmax_row(const Scalar* in, Scalar* out, std::size_t n, std::size_t /*room*/ = 0) {
  const Scalar max = *std::max_element(in, in + n);
  Scalar sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = std::exp(in[i] - max);
    sum += out[i];
  }
  const Scalar inverse_sum = Scalar{1} / sum;
  for (std::size_t i = 0; i < n; ++i) out[i] *= inverse_sum;
  return {max, sum};
}

// The float row, vectorized: exp_lanes in place of libm's exp, and lane_sum's order for the sum
// (term i into partial sum i mod 16, then the partial sums pairwise) in place of the serial one.
// `room` floats (at least n) may be read at `in` and written at `out`: a last vector within it is read
// whole, its lanes past n only selected away, and written with zeros there (no masked access); one
// past the room goes through a buffer. The lanes live in registers (PieceLanes: partial sum l in
// piece l / kPieceLanes, lane l % kPieceLanes), and the sum is taken as the exponentials are stored.
// Attention's causal rows are short (4 vectors on average at T = 128), so the per-row work weighs.
inline SoftmaxRow<float> softmax_row(const float* in, float* out, std::size_t n, std::size_t room = 0) {
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  room = std::max(room, n);
  const std::size_t whole = n / kSumLanes * kSumLanes;
  const bool tail = n > whole, tail_fits = tail && whole + kSumLanes <= room;
  const std::size_t end = tail ? whole + kSumLanes : whole;
  alignas(64) float last[kSumLanes];  // the last vector, where it passes the room
  if (tail && !tail_fits) {
    const FloatLanes v = load_first_lanes(in + whole, n - whole);
    std::memcpy(last, &v, sizeof v);
  }
  const auto source = [&](std::size_t at) { return at < whole || tail_fits ? in + at : last + (at - whole); };
  const auto target = [&](std::size_t at) { return at < whole || tail_fits ? out + at : last + (at - whole); };

  PieceLanes largest[kPieces];
  for (PieceLanes& l : largest) l = PieceLanes{} + kMinusInf;
  for (std::size_t at = 0; at < end; at += kPieceLanes) {
    PieceLanes& l = largest[at / kPieceLanes % kPieces];
    const PieceLanes v = piece_below(load_piece(source(at)), at, n, kMinusInf);
    l = l < v ? v : l;  // a lane keeps its maximum past a NaN
  }
  float partial[kSumLanes];
  std::memcpy(partial, largest, sizeof partial);
  const float max = *std::max_element(partial, partial + kSumLanes);

  PieceLanes sums[kPieces] = {};
  for (std::size_t at = 0; at < end; at += kPieceLanes) {
    const PieceLanes e = piece_below(exp_lanes(load_piece(source(at)) - max), at, n);
    sums[at / kPieceLanes % kPieces] += e;
    std::memcpy(target(at), &e, sizeof e);
  }
  const float sum = fold_partial_sums(sums), inverse_sum = 1.0f / sum;
  for (std::size_t at = 0; at < end; at += kPieceLanes) {
    // Zeros past n stay zeros, even where the sum is NaN.
    const PieceLanes v = piece_below(load_piece(target(at)) * inverse_sum, at, n);
    std::memcpy(target(at), &v, sizeof v);
  }
  if (tail && !tail_fits) {
    FloatLanes v;
    std::memcpy(&v, last, sizeof v);
    store_first_lanes(out + whole, v, n - whole);
  }
  return {max, sum};
}

}  // namespace altgrad::ops::cpu
