#pragma once
// The [quant] table of a training config, read into a quantization recipe and resolved against
// the model's quantization points (recipe_spec.hpp has the semantics):
//
//   [quant]
//   preset = "fp8-hybrid"        # fp32 (default), bf16, fp8-*, mx8, te-*, tseng-mxfp4 (recipe_spec.hpp)
//   seed = 7                     # stochastic rounding; default: the run's seed
//   accumulate = "hopper"        # the Linear GEMMs' accumulation: one model for all three, or hopper_te
//   [quant.grad]                 # role defaults: [quant.act], [quant.weight], [quant.grad]
//   rounding = "stochastic"
//   [[quant.override]]           # later entries win
//   match = "h.*.attn.probs"
//   format = "e1m6"
//   [[quant.override]]           # with `gemm`: only the copy that GEMM reads of the Linear
//   match = "*"                  #   operands it matches (recipe_spec.hpp, ResolvedPoint::by_gemm)
//   gemm = "wgrad"
//   enabled = false
//   [quant.accumulate]           # or per GEMM; unnamed GEMMs keep their model
//   forward = "hopper_fast"      # forward Y = X·Wᵀ, dgrad dX = dY·W, wgrad dW = dYᵀ·X
//   dgrad = "aligned,group=32,bits=16,promote=128"
//   attention = "hopper"         # the attention's q·kᵀ and probs·v; only ever named here
//   [quant.hadamard]             # Hadamard transforms (hadamard_recipe.hpp); a phase's replaces it
//   gemms = ["wgrad"]            # forward, dgrad, wgrad: both operands, along the GEMM's reduction
//   size = 16                    # 16 | 32 | 64 | 128; signs = "te" | "seeded" | "none"; match = "h.*"
//
//   [[quant.phase]]              # from step `start` on (docs/quantization.md, "Schedules")
//   start = 1000                 # after this many steps; strictly increasing
//   preset = "fp8-hybrid"        # a fresh recipe; without a preset the phase changes only what
//   [quant.phase.act]            #   it names in the previous phase's recipe (role tables patch
//   format = "e1m6"              #   its defaults, overrides are appended, accumulate replaces the
//                                #   GEMMs it names)
//
// Settings keys (role tables and overrides): enabled, format, rounding, scaling, history, amax,
// margin, block, scale_rule, scale_format, sr_bits, tile. Every problem is a config::ConfigError
// naming file:line, key and value.
//
// The accumulation applies to a GEMM whose two operands are both quantized (enabled points); a
// GEMM with an unquantized operand stays an FP32 GEMM, as Transformer Engine keeps the LM head in
// higher precision. `accumulate.attention` applies to the attention's forward products, q·kᵀ (points
// .q and .k) and probs·v (.probs and .v); its backward products read the unquantized gradient and
// stay FP32. The one-name `accumulate` names the three Linear GEMMs and leaves the attention's
// model as it is. An emulated model whose operands enter in their own format (inputs = format, the
// FP8 tensor core: one scale per tensor) cannot read a point under MX block scaling: a
// config::ConfigError.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "model/matmul_points.hpp"
#include "recipe/recipe_spec.hpp"

namespace altgrad::recipe {

struct Recipe {
  std::string preset;
  std::uint64_t seed = 0;
  std::vector<ResolvedPoint> points;  // by the model's dense point index
  GemmAccumulation accumulate{};      // by Gemm, as the recipe states it; see accumulation()
  format::AccumulatorModel accumulate_attention{};  // as stated; see attention_accumulation()
  HadamardSpec hadamard{};  // the GEMMs whose operands are transformed (hadamard_layers.hpp)

  bool any_enabled() const;
  // How GEMM `gemm` of matmul `matmul_index` (its index in MatmulPoints::all()) adds its products:
  // `accumulate`'s model when both operand points that GEMM reads are enabled, else FP32's.
  const format::AccumulatorModel& accumulation(std::size_t matmul_index, Gemm gemm) const;
  // The same for a forward attention product of block `layer` of the model `matmuls` names:
  // `accumulate_attention` when both points it reads are enabled, else FP32's.
  const format::AccumulatorModel& attention_accumulation(const model::MatmulPoints& matmuls, std::size_t layer,
                                                         model::AttentionGemm gemm) const;
};

// The model's points in recipe terms, by dense index.
std::vector<PointName> recipe_points(const model::MatmulPoints& points);

// A run's recipes over time: phases[0] starts at step 0; phase i runs the steps from its start up
// to the next phase's. A [quant] table without phases is a one-phase schedule.
struct Phase {
  std::int64_t start = 0;  // the first step (0-based, as the trainer counts the step in progress)
  Recipe recipe;
};

struct Schedule {
  std::vector<Phase> phases;

  std::size_t phase_at(std::int64_t step) const;
  bool any_enabled() const;
};

// Reads config.quant, its phases included, and resolves every phase for config's model. Throws
// config::ConfigError, also where a Hadamard size does not divide an axis it runs along (the
// wgrad GEMM's tokens: config.block_size).
Schedule resolve_schedule(const config::TrainConfig& config);
// The first phase's recipe.
Recipe resolve_recipe(const config::TrainConfig& config);

// A preset resolved for a model (altgrad eval --recipe). Throws config::ConfigError naming the presets.
Recipe preset_recipe(const model::MatmulPoints& points, std::string_view preset, std::uint64_t seed);

// The resolved recipe as the run directory and checkpoints store it (recipe.json), and back.
// recipe_from_json throws CheckpointError naming `source` on a malformed file or on points that
// differ from the model's. "accumulate" ({"forward", "dgrad", "wgrad"}: model names, and
// "attention" where that model is not FP32's) is written only when some GEMM's model is not FP32's,
// so an FP32-accumulating recipe's file is as before; absent, each reads as FP32. "hadamard"
// ({"gemms", "size", "signs", "match"}) likewise only where some GEMM is transformed, and a
// point's "gemms" ({"<gemm>": settings}) only where some GEMM's copy has settings of its own.
nlohmann::json recipe_to_json(const Recipe& recipe);
Recipe recipe_from_json(const nlohmann::json& json, const model::MatmulPoints& points, const std::string& source);
// The run directory's recipe.json: the recipe itself for one phase, else {"phases": [{"start",
// "recipe"}, ...]}.
nlohmann::json schedule_to_json(const Schedule& schedule);

}  // namespace altgrad::recipe
