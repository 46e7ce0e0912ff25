#pragma once
// The run directory's optimizer.json: which optimizer updates each parameter tensor, with its
// hyperparameters and whether the tensor is weight-decayed, written once at the start of a run so
// an analysis can read the assignment as data rather than reconstruct it from the config.
#include <filesystem>

#include "config/config.hpp"
#include "model/gpt.hpp"
#include "optim/make_optimizer.hpp"
#include "optim/optimizer.hpp"
#include "precision/weight_grids.hpp"

namespace altgrad::train {

// One range per parameter tensor, in layout order: nanoGPT's decay rule (tensors of 2+ dimensions),
// and, under a bit-space optimizer, adamw_only for everything but matmul weights (and the
// embeddings unless grid_embeddings).
std::vector<optim::ParameterRange> parameter_ranges(const model::ParameterLayout& layout, const config::TrainConfig& c);
// The optimizer and its hyperparameters as the config names them.
optim::OptimizerSpec optimizer_spec(const config::TrainConfig& c);

// Throws FileError on I/O failure, std::invalid_argument if a tensor lies in no optimizer range.
// Each tensor's entry names the optimizer that updates it: the configured one, or "adamw" for a
// range marked adamw_only; with `grids` and an optimizer that uses them, also the tensor's grid.
void write_optimizer_assignment(const std::filesystem::path& path, const optim::Optimizer& optimizer,
                                const model::ParameterLayout& layout, const precision::WeightGrids* grids = nullptr);

}  // namespace altgrad::train
