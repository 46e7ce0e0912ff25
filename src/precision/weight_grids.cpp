#include "precision/weight_grids.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "format/parse.hpp"
#include "quant/scaling.hpp"

namespace altgrad::precision {
namespace {

// The stored tensor a matmul's weight operand reads: its Linear weight, or wte for the tied LM head.
std::string weight_tensor(const model::MatmulPoint& matmul) {
  return matmul.name == "lm_head" ? "transformer.wte.weight" : "transformer." + matmul.name + ".weight";
}

}  // namespace

WeightGrids::WeightGrids(const model::ParameterLayout& layout, const model::MatmulPoints& points, const recipe::Recipe& recipe,
                         const std::string& grid_format) {
  const optim::WeightGrid storage{format::make_format(format::parse_format(grid_format))};
  for (const auto& spec : layout.tensors()) {
    entries_.push_back({storage, std::nullopt, {}, spec.slot, grid_format + " (grid_format), unscaled", grid_format, {}});
  }
  for (const auto& matmul : points.all()) {
    const std::size_t index = matmul.index * model::kOperandsPerMatmul + static_cast<std::size_t>(model::Operand::weight);
    if (index >= recipe.points.size() || !recipe.points[index].settings.enabled) continue;
    const auto& settings = recipe.points[index].settings;
    const std::string tensor = weight_tensor(matmul);
    std::size_t range = 0;
    while (range < layout.tensors().size() && layout.tensors()[range].name != tensor) ++range;
    if (range == layout.tensors().size()) throw std::logic_error("WeightGrids: no tensor " + tensor);
    Entry& e = entries_[range];
    e.point = index;
    e.settings = settings;
    e.grid = {settings.format};
    e.format_name = settings.format_name;
    e.description = settings.format_name + ", " + std::string(quant::scaling_name(settings.scaling)) + " scaling of " +
                    recipe.points[index].name;
    if (settings.scaling == quant::Scaling::block) {
      // Grids are E8M0 blocks (optim/weight_grid.hpp): for another scale format they stand in for
      // the diagnostics, and update() refuses to step on them.
      if (settings.scale_format != quant::BlockScaleFormat::e8m0) {
        e.description += " (an E8M0 block grid standing in for its " +
                         std::string(quant::scale_format_name(settings.scale_format)) + " block scales)";
      }
      e.grid.scaling = optim::GridScaling::blocks;
      e.grid.block = std::min(quant::block_length(settings, matmul.in_features), quant::kMaxMxBlock);
      if (e.grid.block < quant::block_length(settings, matmul.in_features)) {
        e.description += " (E8M0 blocks of " + std::to_string(e.grid.block) + " standing in for its rows of " +
                         std::to_string(matmul.in_features) + ")";
      }
      e.grid.row_length = matmul.in_features;
      e.grid.rule = settings.scale_rule;
    }
  }
}

optim::WeightGrid WeightGrids::grid_at(std::size_t range, const QuantHooks* hooks, std::span<const float> params) const {
  const Entry& e = entries_.at(range);
  optim::WeightGrid grid = e.grid;
  if (e.fixed_scale) {
    grid.scale = *e.fixed_scale;
    return grid;
  }
  if (!e.point) return grid;
  switch (e.settings.scaling) {
    case quant::Scaling::none:
    case quant::Scaling::block:
      break;
    case quant::Scaling::tensor:
      grid.scale = quant::current_scale(e.settings.format, e.slot.in(params), e.settings.margin);
      grid.scale = quant::per_tensor_scale(e.settings.scale_format, grid.scale);
      break;
    case quant::Scaling::delayed: {
      const quant::PointQuantizer* point = hooks ? hooks->point(*e.point) : nullptr;
      if (point && point->delayed()) grid.scale = point->delayed()->scale();
      break;
    }
  }
  return grid;
}

void WeightGrids::fix_scale(std::size_t range, float scale) {
  Entry& e = entries_.at(range);
  e.fixed_scale = scale;
  e.description += "; code-only weights, fixed scale 2^" + std::to_string(std::ilogb(scale));
}

void WeightGrids::update(optim::Optimizer& optimizer, const QuantHooks* hooks, std::span<const float> params) const {
  if (!optimizer.uses_grids()) return;
  for (const Entry& e : entries_) {
    if (!e.point || e.settings.scaling != quant::Scaling::block) continue;
    if (e.settings.tiles) {
      throw quant::SettingsError(e.description + ": a bit-space optimizer steps on E8M0 block grids along rows; " +
                                 "tile = true (2-D tiles) is not supported there yet");
    }
    if (e.settings.scale_format != quant::BlockScaleFormat::e8m0) {
      throw quant::SettingsError(e.description + ": a bit-space optimizer steps on E8M0 block grids; scale_format = " +
                                 std::string(quant::scale_format_name(e.settings.scale_format)) +
                                 " is not supported there yet");
    }
    if (e.grid.block < quant::block_length(e.settings, e.grid.row_length)) {
      throw quant::SettingsError(e.description + ": a bit-space optimizer steps on E8M0 blocks of at most " +
                                 std::to_string(quant::kMaxMxBlock) + " weights; block = \"axis\" over " +
                                 std::to_string(e.grid.row_length) + " inputs is not supported there yet");
    }
    if (e.settings.scale_rule == quant::MxScaleRule::three_quarters) {
      throw quant::SettingsError(e.description + ": a bit-space optimizer steps on E8M0 block grids, which "
                                 "scale_rule = three_quarters scales by a further 3/4; not supported there yet");
    }
  }
  for (std::size_t range = 0; range < entries_.size(); ++range) optimizer.set_grid(range, grid_at(range, hooks, params));
}

}  // namespace altgrad::precision
