#pragma once
// Checkpoints: a directory per step, `checkpoints/step_<N>/`, holding
//   model.safetensors      parameters under nanoGPT's state_dict names (lm_head.weight included,
//                          tied to transformer.wte.weight), loadable by nanoGPT's GPT unchanged;
//                          code-only weights as codes and scales instead (code_checkpoint.hpp)
//   config.json            nanoGPT's GPTConfig fields plus this bench's variant fields
//   optimizer.safetensors  the optimizer's named state tensors (AdamW: exp_avg, exp_avg_sq; SGD:
//                          momentum_buffer), with its name and step count as metadata; those kept
//                          as codes are stored as codes and scales (state_codes_checkpoint.hpp)
//   state.json             step, seed, validation losses, the gradient-norm history of the
//                          spike detector
//   recipe.json, quant.safetensors   the quantization recipe and its scaling state (quant_checkpoint.hpp)
// A checkpoint is written into a hidden directory and renamed into place, so a crash never leaves a
// half-written step_<N>; loading checks every tensor's presence and shape against the config.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/safetensors.hpp"
#include "model/config.hpp"
#include "model/gpt.hpp"
#include "optim/code_weights.hpp"
#include "optim/optimizer.hpp"

namespace altgrad::checkpoint {

struct CheckpointState {
  std::int64_t step = 0;  // optimizer steps completed; training resumes at this step
  std::uint64_t seed = 0;
  double val_loss = 0.0;  // NaN when this step was not evaluated
  double best_val_loss = 0.0;
  std::int64_t best_step = -1;
  std::vector<double> grad_norm_history;  // oldest first (diag/spike_detectors.hpp)
  double last_loss = 0.0;                 // NaN before the first step
  double initial_loss = std::nan("");     // the first step's loss (stop_loss_multiple); NaN before it
  std::map<std::string, double> kurtosis_baseline;  // monitor/kurtosis_watch.hpp; empty before a diagnostic step
};

// Writes further files of a checkpoint into its staging directory, before it is renamed into place.
using CheckpointExtras = std::function<void(const std::filesystem::path& staging_dir)>;

// Writes checkpoints/step_<state.step> under run_dir and returns its path.
std::filesystem::path save_checkpoint(const std::filesystem::path& run_dir, const model::Gpt<float>& model,
                                      const optim::Optimizer& optimizer, const CheckpointState& state,
                                      const CheckpointExtras& extras = {}, const optim::CodeWeights* codes = nullptr);

// The model config stored in a checkpoint directory's config.json.
model::GptConfig load_checkpoint_config(const std::filesystem::path& checkpoint_dir);
// The fields in which a checkpoint's model config differs from the run's, as config.json names
// them: "n_layer 2 in the checkpoint, 4 in the config; ...". Empty when they agree.
std::string model_config_differences(const model::GptConfig& checkpoint, const model::GptConfig& config);

// Loads parameters into `model`, whose config must match the checkpoint's; tensors stored as codes
// (code_checkpoint.hpp) are decoded to their FP32 values and returned as read, for resume.
optim::CodeWeights load_model(const std::filesystem::path& checkpoint_dir, model::Gpt<float>& model);
// Checks the code tensors load_model() read against the run: `expected` lists each range the run
// keeps as codes with its grid's format name. Throws CheckpointError when the checkpoint stores
// another set of tensors as codes or another format.
void check_code_weights(const std::filesystem::path& checkpoint_dir, const optim::CodeWeights& stored,
                        const model::ParameterLayout& layout,
                        const std::vector<std::pair<std::size_t, std::string>>& expected);
// Why optimizer state is loaded, which decides the remedy an error suggests for another optimizer
// kind: resuming a run (set the run's optimizer) or warm-starting a new one (init_optimizer).
enum class OptimizerLoad { resume, warm_start };
// Restores every state tensor `optimizer` keeps, by name, and its step count. Throws CheckpointError
// naming the file and the tensor when one is missing, extra or of another size, or when the
// checkpoint was written by another optimizer.
void load_optimizer(const std::filesystem::path& checkpoint_dir, optim::Optimizer& optimizer,
                    OptimizerLoad purpose = OptimizerLoad::resume);
CheckpointState load_state(const std::filesystem::path& checkpoint_dir);

// Writes out_dir/model.safetensors, every tensor of nanoGPT's state_dict in F32 (code-only weights
// decoded, lm_head.weight included), and out_dir/config.json: what nanoGPT's GPT loads.
void export_model(const std::filesystem::path& checkpoint_dir, const std::filesystem::path& out_dir);

// A directory given by the user: a checkpoint itself, or a run directory (its latest checkpoint).
std::filesystem::path resolve_checkpoint(const std::filesystem::path& path);

// Deletes checkpoints of run_dir except the `keep` most recent (0 keeps all) and best_step.
void prune_checkpoints(const std::filesystem::path& run_dir, int keep, std::int64_t best_step);

}  // namespace altgrad::checkpoint
