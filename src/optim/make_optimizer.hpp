#pragma once
// Which optimizer a run uses and with which hyperparameters, as plain data (the trainer fills it
// from its config), and the one place that turns it into an Optimizer.
#include <array>
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "optim/adamw.hpp"
#include "optim/bit_space.hpp"
#include "optim/gridwalk.hpp"
#include "optim/madam.hpp"
#include "optim/moment_storage.hpp"
#include "optim/optimizer.hpp"
#include "optim/sgd.hpp"
#include "optim/stiffness_adamw.hpp"

namespace altgrad::optim {

enum class OptimizerKind { adamw, sgd, stiffness_adamw, gridwalk, madam, madam_int };
// Indexed by OptimizerKind; the names are the optimizers' name() and the config's values.
inline constexpr std::array<std::string_view, 6> kOptimizerNames = {AdamW::kName,    Sgd::kName,   StiffnessAdamW::kName,
                                                                    GridWalk::kName, Madam::kName, Madam::kIntegerName};

// The bit-space family: optimizers that read grids and leave adamw_only ranges to AdamW.
constexpr bool is_bit_space(OptimizerKind kind) { return kind != OptimizerKind::adamw && kind != OptimizerKind::sgd; }

struct OptimizerSpec {
  OptimizerKind kind = OptimizerKind::adamw;
  AdamWConfig adamw;
  MomentStorage moments;  // adamw only: how it stores exp_avg and exp_avg_sq
  SgdConfig sgd;
  BitSpaceConfig bit_space;
};

std::unique_ptr<Optimizer> make_optimizer(const OptimizerSpec& spec, std::size_t parameter_count,
                                          std::vector<ParameterRange> ranges);

}  // namespace altgrad::optim
