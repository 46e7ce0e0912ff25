#pragma once
// Deterministic test tensors. Values are built from raw mt19937 words (whose sequence the standard
// fixes) rather than std distributions (whose output differs between standard libraries), so every
// build sees the same tensors.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace altgrad::quant_test {

class TensorRng {
 public:
  explicit TensorRng(std::uint32_t seed) : engine_(seed) {}

  std::uint32_t word() { return static_cast<std::uint32_t>(engine_()); }

  // Uniform integer in [lo, hi].
  int integer(int lo, int hi) { return lo + static_cast<int>(word() % static_cast<std::uint32_t>(hi - lo + 1)); }

  // ±(1 + m/2^23)·2^e with e uniform in [min_exp, max_exp] and a uniform 23-bit m: every binade of
  // the range is hit equally often, which is what exercises every part of a small format's grid.
  // Exponents below −126 round into float32's subnormals.
  float log_uniform(int min_exp, int max_exp) {
    const double significand = 1.0 + static_cast<double>(word() & 0x7F'FFFFu) / 8388608.0;
    const double magnitude = std::ldexp(significand, integer(min_exp, max_exp));
    return static_cast<float>((word() & 1u) ? -magnitude : magnitude);
  }

 private:
  std::mt19937 engine_;
};

inline std::vector<float> log_uniform_tensor(std::size_t n, std::uint32_t seed, int min_exp, int max_exp) {
  TensorRng rng(seed);
  std::vector<float> x(n);
  for (float& v : x) v = rng.log_uniform(min_exp, max_exp);
  return x;
}

}  // namespace altgrad::quant_test
