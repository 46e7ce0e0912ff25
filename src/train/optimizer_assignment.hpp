#pragma once
// The run directory's optimizer.json: which optimizer updates each parameter tensor, with its
// hyperparameters and whether the tensor is weight-decayed, written once at the start of a run so
// an analysis can read the assignment as data rather than reconstruct it from the config.
#include <filesystem>

#include "model/gpt.hpp"
#include "optim/optimizer.hpp"

namespace altgrad::train {

// Throws FileError on I/O failure, std::invalid_argument if a tensor lies in no optimizer range.
void write_optimizer_assignment(const std::filesystem::path& path, const optim::Optimizer& optimizer,
                                const model::ParameterLayout& layout);

}  // namespace altgrad::train
