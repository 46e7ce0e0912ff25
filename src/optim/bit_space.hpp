#pragma once
// What the bit-space optimizers (stiffness_adamw, gridwalk, madam, madam_int; docs/optimizers.md)
// share: AdamW's moments, AdamW itself on the ranges marked adamw_only, the grid of every range,
// and the Philox key of their stochastic rounding. Each subclass supplies the update of one
// range on its grid.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "optim/adam_moments.hpp"
#include "optim/adamw.hpp"
#include "optim/optimizer.hpp"
#include "optim/weight_grid.hpp"

namespace altgrad::optim {

enum class Precondition { grad, update };

struct BitSpaceConfig {
  int stiffness_power = 1;                          // stiffness_adamw: p in S(w)^p, 0, 1 or 2
  Precondition precondition = Precondition::update; // stiffness_adamw: where S^p multiplies
  // Madam (Bernstein et al. 2020): the weight bound p_scale · RMS(initial tensor), the bound on
  // the normalized gradient, and the second-moment decay; their published defaults.
  float madam_p_scale = 3.0f;
  float madam_g_bound = 10.0f;
  float madam_beta = 0.999f;
  // The rate of the adamw_only ranges as a multiple of the step's lr (adamw_learning_rate /
  // learning_rate in the config), so that it follows the same schedule.
  double adamw_lr_ratio = 1.0;
  std::uint64_t seed = 0;  // the run seed; stochastic rounding draws under the grid-walk purpose key
};

class BitSpaceOptimizer : public Optimizer {
 public:
  void step(std::span<float> params, std::span<const float> grads, float lr) final;
  std::vector<Hyperparameter> hyperparameters() const override;

  bool uses_grids() const final { return true; }
  void set_grid(std::size_t range, const WeightGrid& grid) final;
  const WeightGrid& grid(std::size_t range) const { return grids_.at(range); }

 protected:
  BitSpaceOptimizer(std::string_view who, std::size_t parameter_count, const AdamWConfig& adamw,
                    const BitSpaceConfig& config, std::vector<ParameterRange> ranges);

  // Updates range `index` (not adamw_only) at step `step` (from 1); `spans` are its grid's spans,
  // offsets within the range.
  virtual void update_range(std::size_t index, const ParameterRange& range, std::span<const GridSpan> spans,
                            float* p, const float* g, const AdamScalars& s, std::int64_t step) = 0;
  virtual std::vector<Hyperparameter> own_hyperparameters() const = 0;

  const AdamWConfig& adamw() const { return adamw_; }
  const BitSpaceConfig& config() const { return config_; }
  float* exp_avg() { return state_values(m_).data(); }
  float* exp_avg_sq() { return state_values(v_).data(); }
  // The key of philox_word(key, step, element index): thread-count invariant draws.
  std::uint64_t rounding_key() const { return rounding_key_; }
  float decay_factor(const ParameterRange& range, float lr) const;
  // The rate of the adamw_only ranges at a step whose rate is lr.
  double adamw_rate(float lr) const;

 private:
  void adamw_range(const ParameterRange& range, float* p, const float* g, const AdamScalars& s);

  AdamWConfig adamw_;
  BitSpaceConfig config_;
  std::size_t m_, v_;
  std::uint64_t rounding_key_;
  std::vector<WeightGrid> grids_;
  std::vector<GridSpan> spans_;  // scratch, sized for the largest range
};

// Stochastic rounding of x to an integer: floor(x) + 1 with probability x − floor(x), decided by a
// 32-bit word (resolved to 2^−32, as format::Rounding::stochastic).
inline float stochastic_round(float x, std::uint32_t word) {
  const float down = std::floor(x);
  const double fraction = static_cast<double>(x) - static_cast<double>(down);
  // Branch-free: the outcome is a coin flip a branch predictor cannot learn.
  return down + static_cast<float>(static_cast<double>(word) < fraction * 4294967296.0);
}

}  // namespace altgrad::optim
