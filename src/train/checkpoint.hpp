#pragma once
// Checkpoints: a directory per step, `checkpoints/step_<N>/`, holding
//   model.safetensors      parameters under nanoGPT's state_dict names (lm_head.weight included,
//                          tied to transformer.wte.weight), loadable by nanoGPT's GPT unchanged
//   config.json            nanoGPT's GPTConfig fields plus this bench's variant fields
//   optimizer.safetensors  the optimizer's named state tensors (AdamW: exp_avg, exp_avg_sq; SGD:
//                          momentum_buffer), with its name and step count as metadata
//   state.json             step, seed, validation losses, the gradient-norm history of the
//                          spike detector
//   recipe.json, quant.safetensors   the quantization recipe and its scaling state (quant_checkpoint.hpp)
// A checkpoint is written into a hidden directory and renamed into place, so a crash never leaves a
// half-written step_<N>; loading checks every tensor's presence and shape against the config.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "model/config.hpp"
#include "model/gpt.hpp"
#include "optim/optimizer.hpp"
#include "train/safetensors.hpp"

namespace altgrad::train {

struct CheckpointState {
  std::int64_t step = 0;  // optimizer steps completed; training resumes at this step
  std::uint64_t seed = 0;
  double val_loss = 0.0;  // NaN when this step was not evaluated
  double best_val_loss = 0.0;
  std::int64_t best_step = -1;
  std::vector<double> grad_norm_history;  // oldest first (diag/spike_detectors.hpp)
  double last_loss = 0.0;                 // NaN before the first step
  double initial_loss = std::nan("");     // the first step's loss (stop_loss_multiple); NaN before it
};

// Writes further files of a checkpoint into its staging directory, before it is renamed into place.
using CheckpointExtras = std::function<void(const std::filesystem::path& staging_dir)>;

// Writes checkpoints/step_<state.step> under run_dir and returns its path.
std::filesystem::path save_checkpoint(const std::filesystem::path& run_dir, const model::Gpt<float>& model,
                                      const optim::Optimizer& optimizer, const CheckpointState& state,
                                      const CheckpointExtras& extras = {});

// The model config stored in a checkpoint directory's config.json.
model::GptConfig load_checkpoint_config(const std::filesystem::path& checkpoint_dir);

// Loads parameters into `model`, whose config must match the checkpoint's.
void load_model(const std::filesystem::path& checkpoint_dir, model::Gpt<float>& model);
// Restores every state tensor `optimizer` keeps, by name, and its step count. Throws CheckpointError
// naming the file and the tensor when one is missing, extra or of another size, or when the
// checkpoint was written by another optimizer.
void load_optimizer(const std::filesystem::path& checkpoint_dir, optim::Optimizer& optimizer);
CheckpointState load_state(const std::filesystem::path& checkpoint_dir);

// A directory given by the user: a checkpoint itself, or a run directory (its latest checkpoint).
std::filesystem::path resolve_checkpoint(const std::filesystem::path& path);

// Deletes checkpoints of run_dir except the `keep` most recent (0 keeps all) and best_step.
void prune_checkpoints(const std::filesystem::path& run_dir, int keep, std::int64_t best_step);

}  // namespace altgrad::train
