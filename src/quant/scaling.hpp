#pragma once
// Per-tensor scales: scale = max_finite / (amax · 2^margin), x_q = Q(x · scale), x̂ = x_q / scale.
// Current scaling takes amax from the tensor being quantized; delayed scaling from a history of
// earlier amaxes (Micikevicius et al. 2022, "FP8 Formats for Deep Learning"; Transformer Engine).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "format/spec.hpp"

namespace altgrad::quant {

// max |x| over non-NaN elements (Inf included), multithreaded; exact for any thread count.
float amax_of(std::span<const float> x);

// The scale for `amax`, rounded once to FP32; `previous` when amax is zero or not finite.
float scale_from_amax(const format::Format& f, float amax, int margin, float previous = 1.0f);

inline float current_scale(const format::Format& f, std::span<const float> x, int margin) {
  return scale_from_amax(f, amax_of(x), margin);
}

enum class AmaxAlgorithm : std::uint8_t {
  max,          // the largest amax in the history window
  most_recent,  // the last recorded amax
};

// Delayed scaling: the scale used at step t comes from the amaxes recorded at steps before t.
// The history starts empty and the scale at 1; record() pushes a step's amax and recomputes the
// scale, which a zero or non-finite reduced amax leaves unchanged.
class DelayedScaling {
 public:
  DelayedScaling(const format::Format& f, std::size_t history_length, AmaxAlgorithm algorithm, int margin);

  float scale() const { return scale_; }
  void record(float amax);
  // The amaxes recorded since construction, or since restore() (counting the restored ones). The
  // step that records the first used scale 1: there was no history to take one from.
  std::uint64_t amaxes_recorded() const { return recorded_; }

  // The recorded amaxes, oldest first (at most history_length of them).
  std::vector<float> history() const;
  // Restores state saved from history() and scale() (checkpoint resume).
  void restore(std::span<const float> history_oldest_first, float scale);

 private:
  format::Format format_;
  AmaxAlgorithm algorithm_;
  int margin_;
  std::vector<float> ring_;  // allocated once; ring_[(head_ + i) % size] is the i-th oldest
  std::size_t head_ = 0;
  std::size_t filled_ = 0;
  std::uint64_t recorded_ = 0;
  float scale_ = 1.0f;
};

}  // namespace altgrad::quant
