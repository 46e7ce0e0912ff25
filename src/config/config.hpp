#pragma once
// The training configuration: nanoGPT's knob names and meanings, plus the model variants, data
// source and run layout this bench adds, read from TOML with `--set key=value` overrides on top.
//
// Every problem is a ConfigError whose message starts with where the value came from
// ("configs/x.toml:12" or "--set n_head=5"), then names the key, the bad value and what is allowed.
#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "config/config_error.hpp"
#include "config/quant_table.hpp"
#include "data/corpus.hpp"
#include "format/rounding.hpp"
#include "model/config.hpp"
#include "optim/make_optimizer.hpp"

namespace altgrad::config {

// The model's own variant enums; the name arrays list them in enum order for the config parser.
using Norm = model::Norm;
inline constexpr std::array<std::string_view, 2> kNormNames = {"layernorm", "rmsnorm"};

using Mlp = model::Mlp;
inline constexpr std::array<std::string_view, 2> kMlpNames = {"gelu", "swiglu"};

using OptimizerKind = optim::OptimizerKind;
using optim::kOptimizerNames;

using Precondition = optim::Precondition;
inline constexpr std::array<std::string_view, 2> kPreconditionNames = {"grad", "update"};

// The engine a run computes on. The names are ops/backend.hpp's device names, which the trainer
// resolves; config/ holds only the choice.
enum class Device : std::uint8_t { cpu, cuda };
inline constexpr std::array<std::string_view, 2> kDeviceNames = {"cpu", "cuda"};

// How the low-precision gradient reduction sums the micro-batches' quantized gradients
// (docs/optimizers.md, "Low-precision gradient reduction"): every partial sum rounded onto the
// format (as NCCL's FP8 sum holds them), or summed in FP32.
enum class GradReduceSum : std::uint8_t { in_format, fp32 };
inline constexpr std::array<std::string_view, 2> kGradReduceSumNames = {"format", "fp32"};

// Defaults: a run that learns visibly in about ten minutes on two CPU cores, in FP32.
//   Model: 4 layers, 4 heads, 128 channels, context 128, no biases — nanoGPT's "baby GPT" for
//   laptops. About 0.84M parameters: 12·L·C² = 786k in the blocks, (256 + 128)·C = 49k in the
//   token and position embeddings; with bytes as tokens the embedding stays a small share.
//   Work: batch 16 × 128 = 2,048 tokens per step, measured at about 12k tokens/s (0.17 s per step)
//   on two cores, so 3,000 steps take about 9 minutes and see 6.1M tokens, about 1.4 epochs of the
//   default corpus's 4.5 MB train split.
//   Optimizer: AdamW at 1e-3 (small models tolerate a high rate; nanoGPT's character-level setting),
//   100 warmup steps, cosine decay to min_lr = lr/10 at the last step (nanoGPT, after Chinchilla),
//   beta2 = 0.99 because each step sees few tokens, weight decay 0.1, gradient clip 1.0.
//   Evaluation: every 500 steps, 20 validation batches (forward only, ≈ 1/3 of a step each), so
//   the 7 evaluations cost about 1% of the run.
struct TrainConfig {
  // model
  int n_layer = 4;
  int n_head = 4;
  int n_embd = 128;
  int block_size = 128;  // context length in bytes
  bool bias = false;     // biases in Linear and norm layers (nanoGPT: False is a little better and faster)
  Norm norm = Norm::layernorm;
  Mlp mlp = Mlp::gelu;
  int mlp_hidden = 0;  // width of the MLP's hidden layer; 0 = the model's default for `mlp`

  // data
  std::string data;  // corpus path (file, folder or .jsonl); "" = data/legal-corpus.txt in the repository
  data::CorpusFormat data_format = data::CorpusFormat::automatic;
  std::string jsonl_field = "text";
  double val_fraction = 0.1;  // the last 10% of the bytes is validation
  int batch_size = 16;        // sequences per micro-step
  int gradient_accumulation_steps = 1;
  // Low-precision gradient reduction (docs/optimizers.md): each micro-batch's gradient quantized to
  // this signed format before the micro-batches are summed, as MS-AMP's FP8 all-reduce sums its
  // ranks'; "" = the FP32 sum, as always.
  std::string grad_reduce_format;
  GradReduceSum grad_reduce_sum = GradReduceSum::in_format;  // partial sums in the format, or in FP32

  // optimizer and schedule
  OptimizerKind optimizer = OptimizerKind::adamw;
  double learning_rate = 1e-3;  // peak, reached after warmup
  double min_lr = 1e-4;         // reached at lr_decay_iters and kept after
  std::int64_t warmup_iters = 100;
  std::int64_t lr_decay_iters = 3000;  // ≈ max_iters, as nanoGPT recommends
  std::int64_t max_iters = 3000;
  double weight_decay = 0.1;  // AdamW: decoupled; SGD: L2, added to the gradient (docs/optimizers.md)
  double beta1 = 0.9;
  double beta2 = 0.99;
  double momentum = 0.9;  // SGD only
  bool nesterov = false;  // SGD only; needs momentum > 0
  double grad_clip = 1.0;  // clip the global gradient norm at this value; 0 = no clipping
  // bit-space optimizers (docs/optimizers.md)
  std::string grid_format = "bf16";  // the grid of weights whose :weight point is not quantized
  bool grid_embeddings = false;      // wte and wpe too, rather than AdamW
  int stiffness_power = 1;           // stiffness_adamw: p in S(w)^p
  Precondition precondition = Precondition::update;  // stiffness_adamw: S^p on the gradient or the update
  double madam_p_scale = 3.0;        // madam: weights bounded by p_scale · RMS(initial tensor)
  double madam_g_bound = 10.0;       // madam: bound on the normalized gradient
  double madam_beta = 0.999;         // madam: second-moment decay
  // Peak rate of the tensors a bit-space optimizer leaves to AdamW (norm gains, biases,
  // embeddings), on the same schedule; 0: learning_rate. Madam's η is no rate for AdamW.
  double adamw_learning_rate = 0.0;
  bool master_weights = true;        // false: gridwalk keeps its weights as codes only
  int code_headroom = 2;             // code-only weights: binades of headroom above the initial amax
  // AdamW's moments as codes with one scale per group (docs/optimizers.md, "Low-precision optimizer
  // state"); "fp32" keeps a moment in FP32, as AdamW always did.
  std::string adam_m_format = "fp32";  // exp_avg: "fp32" or a signed format name
  std::string adam_v_format = "fp32";  // exp_avg_sq: "fp32" or any format name
  int adam_state_group = 128;          // consecutive elements of one tensor sharing a scale
  format::Rounding adam_state_rounding = format::Rounding::nearest_even;  // on every write of a moment

  // warm start (docs/quantization.md, "Schedules and warm starts"): step 0 of this run starts from
  // the weights of another run's checkpoint instead of a fresh initialization
  std::string init_from;                // a run directory (its latest checkpoint) or a checkpoint; "" = none
  std::int64_t init_from_step = 0;      // that run's checkpoint of this step; 0 = its latest
  std::string init_from_checksum;       // the source model file's CRC-32C; "" = not checked (filled in config.toml)
  bool init_optimizer = true;           // carry the source's optimizer state
  bool init_quant_state = true;         // carry its delayed-scaling histories where the points keep them

  // run
  std::int64_t eval_interval = 500;
  int eval_iters = 20;  // batches per split per evaluation
  std::int64_t log_interval = 10;
  std::uint64_t seed = 1337;
  Device device = Device::cpu;  // cpu: the reference engine; cuda: one NVIDIA GPU (docs/cuda.md)
  std::string out_dir = "runs/default";
  std::int64_t checkpoint_interval = 1000; // steps between checkpoints; 0 = only at the end of the run
  int keep_checkpoints = 3;               // keep the K most recent; 0 = keep all

  // diagnostics and warnings (thresholds from the research notes; docs/quantization.md)
  std::int64_t diag_interval = 100;     // steps between full diagnostics (code usage, kurtosis, SNR, ...)
  double warn_overflow_pct = 1.0;       // a point's overflow above this % of its values, in one step
  double warn_underflow_pct = 10.0;     // a point's underflow above this % of its values, in one step
  double warn_kurtosis = 10.0;          // kurtosis of a block output or a block's q, k, v (normal = 3)
  double warn_kurtosis_growth = 6.0;    // a matmul input's kurtosis over its first diagnostic step's
  double warn_attention_entropy = 1.0;  // a head's mean attention entropy below this, in nats
  double warn_loss_spike = 2.0;         // loss above this multiple of the previous step's
  double warn_grad_norm_spike = 100.0;  // gradient norm above this multiple of its running median
  // Gradient clipping in more than this fraction of the last 100 steps; 1 = never (the default:
  // the default config clips nearly every step once past its first few hundred, and learns well).
  double warn_clip_rate = 1.0;
  // A quantized point's amax growing faster than this many binades per 100 steps (a fitted
  // exponential over the last 100 steps); 0 = never.
  double warn_amax_growth = 2.0;
  double warn_layer_grad_ratio = 100.0; // top block's gradient norm above this multiple of the bottom block's
  double warn_grad_snr_db = 10.0;       // a quantized gradient's SNR against FP32 below this, in dB
  double warn_dead_units_pct = 20.0;    // an MLP with more than this % of its hidden units dead
  // Value profiles of every quantization point on diagnostic steps, with the range fit of
  // range_fit_format at the scale each point's scaling would choose (docs/quantization.md).
  bool profile_points = true;
  std::string range_fit_format = "e1m6";
  std::int64_t warn_every = 100;        // steps before the same warning at the same point repeats
  // Stop the run as diverged when a step's loss exceeds this multiple of the run's first-step loss;
  // 0 = off. Threshold searches (docs/experiments.md) set it to define divergence.
  double stop_loss_multiple = 0.0;
  // The validation loss whose first reaching the end event reports in steps, tokens and seconds
  // (docs/quantization.md, "Cost of a result"); 0 = none.
  double target_loss = 0.0;
  // The loss Hessian's top eigenvalue by power iteration every hessian_interval steps (0 = never;
  // docs/optimizers.md): hessian_iterations iterations of finite-difference Hessian-vector
  // products with step hessian_epsilon, two forward/backward passes per micro-batch each.
  std::int64_t hessian_interval = 0;
  int hessian_iterations = 20;
  double hessian_epsilon = 1e-3;

  QuantTable quant;  // the [quant] table, untouched (see quant_table.hpp)

  bool operator==(const TrainConfig&) const = default;
};

// Reads `file` (keys it does not set keep their defaults), applies `overrides` ("key=value", as
// given to --set, in order; the value is read as the key's type: `--set n_layer=6`,
// `--set learning_rate=3e-4`, `--set bias=true`, `--set norm=rmsnorm`), then validates the result.
// Throws ConfigError on unreadable files, TOML syntax errors, unknown keys or tables (only [quant]
// is allowed), wrong types and bad values.
TrainConfig load_config(const std::filesystem::path& file, std::span<const std::string> overrides = {});

// As load_config, from TOML text; `source_name` stands for the file in messages. An empty text
// gives the defaults (plus overrides).
TrainConfig parse_config(std::string_view toml_text, std::string_view source_name,
                         std::span<const std::string> overrides = {});

// Checks every rule load_config checks, for a config built in code. Throws ConfigError.
void validate_config(const TrainConfig& config);

// The complete config as TOML: every key, in a fixed order, with a comment on each; parsing it
// gives back an equal config. The [quant] table comes last, as read.
std::string config_to_toml(const TrainConfig& config);

// The model the config describes (byte vocabulary, the MLP width resolved), validated. Throws
// std::invalid_argument on a shape the model rejects.
model::GptConfig gpt_config(const TrainConfig& config);

// config_to_toml, written atomically (the run directory's config.toml). Throws FileError.
void write_config(const std::filesystem::path& path, const TrainConfig& config);

}  // namespace altgrad::config
