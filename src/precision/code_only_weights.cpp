#include "precision/code_only_weights.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "optim/gridwalk.hpp"

namespace altgrad::precision {

std::vector<std::pair<std::size_t, std::string>> code_ranges(const config::TrainConfig& config, const optim::Optimizer& optimizer,
                                                             const model::ParameterLayout& layout,
                                                             const WeightGrids& grids, std::span<const float> params) {
  std::vector<std::pair<std::size_t, std::string>> out;
  if (config.master_weights) return out;
  const auto ranges = optimizer.ranges();
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    if (ranges[r].adamw_only) continue;
    if (grids.grid_at(r, nullptr, params).scaling == optim::GridScaling::blocks) {
      throw config::ConfigError("master_weights = false: " + layout.tensors()[r].name + " lives on MX blocks (" +
                        grids.describe(r) + "), which quantize a weight once per GEMM axis; code-only weights need "
                        "a per-tensor or unscaled :weight point");
    }
    out.emplace_back(r, grids.format_name(r));
  }
  return out;
}

optim::CodeWeights encode_weights(const config::TrainConfig& config, const optim::Optimizer& optimizer,
                                  const model::ParameterLayout& layout, const WeightGrids& grids,
                                  std::span<const float> params) {
  optim::CodeWeights codes;
  for (const auto& [r, format_name] : code_ranges(config, optimizer, layout, grids, params)) {
    const optim::ParameterRange& range = optimizer.ranges()[r];
    codes.add(r, range.offset, grids.grid_at(r, nullptr, params).format, format_name, params.subspan(range.offset, range.size),
              config.code_headroom);
  }
  return codes;
}

std::pair<optim::CodeWeights, nlohmann::json> reencode_weights(const optim::CodeWeights& old, const config::TrainConfig& config,
                                                              const optim::Optimizer& optimizer,
                                                              const model::ParameterLayout& layout,
                                                              const WeightGrids& grids, std::span<const float> params) {
  optim::CodeWeights codes;
  nlohmann::json report = nlohmann::json::array();
  for (const auto& [r, format_name] : code_ranges(config, optimizer, layout, grids, params)) {
    const optim::CodeTensor* before = old.find(r);
    if (before && before->format_name == format_name) {
      codes.add_stored(*before);
      continue;
    }
    const optim::ParameterRange& range = optimizer.ranges()[r];
    const std::span<const float> values = params.subspan(range.offset, range.size);
    codes.add(r, range.offset, grids.grid_at(r, nullptr, params).format, format_name, values, config.code_headroom);
    const optim::CodeTensor& after = *codes.find(r);
    std::size_t changed = 0;
    double largest = 0.0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double change = std::abs(static_cast<double>(after.value(i)) - values[i]);
      changed += change != 0.0;
      largest = std::max(largest, change);
    }
    report.push_back({{"tensor", layout.tensors()[r].name}, {"from", before ? before->format_name : "fp32"},
                      {"to", format_name}, {"rounding", "nearest_even"}, {"values_changed", changed},
                      {"values", values.size()}, {"max_abs_change", largest}});
  }
  return {std::move(codes), std::move(report)};
}

void bind_code_weights(optim::CodeWeights& codes, std::span<float> params, WeightGrids& grids, QuantHooks* hooks,
                       optim::Optimizer& optimizer) {
  if (codes.tensors().empty()) return;
  codes.decode_into(params);
  for (const optim::CodeTensor& t : codes.tensors()) {
    grids.fix_scale(t.range, t.scale);
    if (const auto point = grids.point(t.range); point && hooks && hooks->point(*point)) {
      hooks->point(*point)->fix_scale(t.scale);
    }
  }
  auto* walk = dynamic_cast<optim::GridWalk*>(&optimizer);
  if (!walk) throw std::logic_error("code-only weights need the gridwalk optimizer, not " + std::string(optimizer.name()));
  walk->use_code_weights(&codes);
}

}  // namespace altgrad::precision
