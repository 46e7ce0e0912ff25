#pragma once
// Which optimizer a run uses and with which hyperparameters, as plain data (the trainer fills it
// from its config), and the one place that turns it into an Optimizer.
#include <array>
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "optim/adamw.hpp"
#include "optim/optimizer.hpp"
#include "optim/sgd.hpp"

namespace altgrad::optim {

enum class OptimizerKind { adamw, sgd };
// Indexed by OptimizerKind; the names are the optimizers' name() and the config's values.
inline constexpr std::array<std::string_view, 2> kOptimizerNames = {AdamW::kName, Sgd::kName};

struct OptimizerSpec {
  OptimizerKind kind = OptimizerKind::adamw;
  AdamWConfig adamw;
  SgdConfig sgd;
};

std::unique_ptr<Optimizer> make_optimizer(const OptimizerSpec& spec, std::size_t parameter_count,
                                          std::vector<ParameterRange> ranges);

}  // namespace altgrad::optim
