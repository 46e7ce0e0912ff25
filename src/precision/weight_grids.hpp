#pragma once
// The grid each parameter tensor lives on, for the bit-space optimizers (docs/optimizers.md): a
// tensor whose `:weight` point is quantized lives on that point's effective grid (its format, and
// its per-tensor or MX block scale); any other tensor on the config's grid_format, unscaled.
// Built once per run from the recipe; update() hands the optimizer the grids for the coming step:
//   delayed scaling   the scale the next forward pass will use (the history after this step's amax)
//   current scaling   the scale of the weights as they are now (the one this step's forward used)
//   block scaling     found by the optimizer from the weights per block, as the quantizer does
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "recipe/recipe.hpp"
#include "model/gpt.hpp"
#include "optim/optimizer.hpp"
#include "optim/weight_grid.hpp"
#include "recipe/recipe_spec.hpp"
#include "precision/quant_hooks.hpp"

namespace altgrad::precision {

class WeightGrids {
 public:
  // One entry per tensor of `layout`, in order (the trainer's parameter ranges).
  WeightGrids(const model::ParameterLayout& layout, const model::MatmulPoints& points, const recipe::Recipe& recipe,
              const std::string& grid_format);

  // Range `range`'s grid for the coming step. `hooks` is null when nothing is quantized.
  optim::WeightGrid grid_at(std::size_t range, const QuantHooks* hooks, std::span<const float> params) const;
  // Sets every range's grid for the coming step, when the optimizer uses grids.
  void update(optim::Optimizer& optimizer, const QuantHooks* hooks, std::span<const float> params) const;
  std::size_t size() const { return entries_.size(); }

  // Code-only weights: range `range` lives on one fixed scale from now on (its codes' scale).
  void fix_scale(std::size_t range, float scale);
  // The dense index of the range's quantized :weight point, if it has one.
  std::optional<std::size_t> point(std::size_t range) const { return entries_.at(range).point; }
  // The name of the range's grid format, as the config wrote it ("e4m3", or grid_format's value).
  const std::string& format_name(std::size_t range) const { return entries_.at(range).format_name; }

  // "e4m3, delayed scale of h.0.attn.c_attn:weight" or "bf16 (grid_format), unscaled", for optimizer.json.
  const std::string& describe(std::size_t range) const { return entries_.at(range).description; }

 private:
  struct Entry {
    optim::WeightGrid grid;
    std::optional<std::size_t> point;  // the dense index of the tensor's quantized :weight point
    quant::PointSettings settings;
    model::Slot slot;
    std::string description;
    std::string format_name;
    std::optional<float> fixed_scale;
  };
  std::vector<Entry> entries_;
};

}  // namespace altgrad::precision
