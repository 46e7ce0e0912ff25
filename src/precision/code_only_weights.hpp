#pragma once
// How a run keeps weights as codes (`master_weights = false`, docs/optimizers.md "Code-only
// weights"): which tensors, encoding them at initialization, and binding the codes to the run —
// the parameter buffer the kernels read, each tensor's grid and :weight point, and gridwalk.
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "model/parameter_layout.hpp"
#include "optim/code_weights.hpp"
#include "optim/optimizer.hpp"
#include "precision/quant_hooks.hpp"
#include "precision/weight_grids.hpp"

namespace altgrad::precision {

// Each parameter range the optimizer updates on a grid (not adamw_only), with its grid's format
// name; empty when config.master_weights. Throws ConfigError for a range on MX blocks: an MX weight
// is quantized once per GEMM axis, with other block scales each time, so no single code per weight
// exists.
std::vector<std::pair<std::size_t, std::string>> code_ranges(const config::TrainConfig& config, const optim::Optimizer& optimizer,
                                                             const model::ParameterLayout& layout,
                                                             const WeightGrids& grids, std::span<const float> params);

// The freshly initialized weights of those ranges, encoded (optim::CodeWeights::add).
optim::CodeWeights encode_weights(const config::TrainConfig& config, const optim::Optimizer& optimizer,
                                  const model::ParameterLayout& layout, const WeightGrids& grids,
                                  std::span<const float> params);

// The code weights after the grids changed (a phase switch): a range whose grid format is unchanged
// keeps its codes and scale; any other is encoded again from its current values, `params` (the old
// codes' values), by round to nearest even under a new code_scale, as at initialization. Returns
// the new codes and a report: per re-encoded tensor its old and new format and how many values
// the rounding changed, and the largest change.
std::pair<optim::CodeWeights, nlohmann::json> reencode_weights(const optim::CodeWeights& old, const config::TrainConfig& config,
                                                              const optim::Optimizer& optimizer,
                                                              const model::ParameterLayout& layout,
                                                              const WeightGrids& grids, std::span<const float> params);

// From here on `params` holds the codes' values, each code range's grid and :weight point use its
// codes' scale (so quantizing it is exact), and the optimizer — gridwalk — moves the codes. Does
// nothing when `codes` is empty. `hooks` is null when nothing is quantized.
void bind_code_weights(optim::CodeWeights& codes, std::span<float> params, WeightGrids& grids, QuantHooks* hooks,
                       optim::Optimizer& optimizer);

}  // namespace altgrad::precision
