#include "config/config_fields.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

#include "io/toml_literal.hpp"

namespace altgrad::config::schema {
namespace {

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr IntegerField<int> positive_int(int TrainConfig::*member) { return {member, 1, kIntMax}; }
constexpr IntegerField<int> count_int(int TrainConfig::*member) { return {member, 0, kIntMax}; }
constexpr IntegerField<std::int64_t> positive_steps(std::int64_t TrainConfig::*member) { return {member, 1, kInt64Max}; }
constexpr IntegerField<std::int64_t> count_steps(std::int64_t TrainConfig::*member) { return {member, 0, kInt64Max}; }
constexpr RealField non_negative(double TrainConfig::*member) { return {member, 0.0, kInf, false, false}; }
constexpr RealField unit_interval(double TrainConfig::*member, bool min_open) { return {member, 0.0, 1.0, min_open, true}; }

using C = TrainConfig;

const std::array kFields = {
    Field{"n_layer", "model", "transformer blocks", positive_int(&C::n_layer)},
    Field{"n_head", "model", "attention heads per block; must divide n_embd", positive_int(&C::n_head)},
    Field{"n_embd", "model", "channels of the residual stream", positive_int(&C::n_embd)},
    Field{"block_size", "model", "context length in bytes", positive_int(&C::block_size)},
    Field{"bias", "model", "biases in Linear and norm layers", BoolField{&C::bias}},
    Field{"norm", "model", "layernorm | rmsnorm", ChoiceField<Norm>{&C::norm, kNormNames}},
    Field{"mlp", "model", "gelu | swiglu", ChoiceField<Mlp>{&C::mlp, kMlpNames}},
    Field{"mlp_hidden", "model", "MLP hidden width; 0 = the default for the mlp kind", count_int(&C::mlp_hidden)},

    Field{"data", "data", "text file, folder of .txt files, or .jsonl; \"\" = data/legal-corpus.txt",
          TextField{&C::data, true}},
    Field{"data_format", "data", "auto | text | dir | jsonl",
          ChoiceField<data::CorpusFormat>{&C::data_format, data::kCorpusFormatNames}},
    Field{"jsonl_field", "data", "the string field holding each JSONL document", TextField{&C::jsonl_field, false}},
    Field{"val_fraction", "data", "the last fraction of the bytes, held out for validation",
          unit_interval(&C::val_fraction, true)},
    Field{"batch_size", "data", "sequences per micro-step", positive_int(&C::batch_size)},
    Field{"gradient_accumulation_steps", "data", "micro-steps per optimizer step",
          positive_int(&C::gradient_accumulation_steps)},
    Field{"grad_reduce_format", "data",
          "each micro-batch's gradient quantized to this signed format before the sum (MS-AMP's FP8 all-reduce); \"\" = FP32",
          TextField{&C::grad_reduce_format, true}},
    Field{"grad_reduce_sum", "data", "with grad_reduce_format: partial sums in the format (format) or in FP32 (fp32)",
          ChoiceField<GradReduceSum>{&C::grad_reduce_sum, kGradReduceSumNames}},

    Field{"optimizer", "optimizer", "adamw | sgd | stiffness_adamw | gridwalk | madam | madam_int (docs/optimizers.md)",
          ChoiceField<OptimizerKind>{&C::optimizer, kOptimizerNames}},
    Field{"learning_rate", "optimizer", "peak learning rate, after warmup", RealField{&C::learning_rate, 0.0, kInf, true, false}},
    Field{"min_lr", "optimizer", "learning rate at lr_decay_iters and after", non_negative(&C::min_lr)},
    Field{"warmup_iters", "optimizer", "steps of linear warmup", count_steps(&C::warmup_iters)},
    Field{"lr_decay_iters", "optimizer", "step where the cosine decay reaches min_lr", count_steps(&C::lr_decay_iters)},
    Field{"max_iters", "optimizer", "optimizer steps in the run", positive_steps(&C::max_iters)},
    Field{"weight_decay", "optimizer", "adamw: decoupled weight decay; sgd: L2 decay added to the gradient",
          non_negative(&C::weight_decay)},
    Field{"beta1", "optimizer", "AdamW first-moment decay", unit_interval(&C::beta1, false)},
    Field{"beta2", "optimizer", "AdamW second-moment decay", unit_interval(&C::beta2, false)},
    Field{"momentum", "optimizer", "SGD momentum; 0 = plain SGD", unit_interval(&C::momentum, false)},
    Field{"nesterov", "optimizer", "SGD Nesterov momentum (needs momentum > 0)", BoolField{&C::nesterov}},
    Field{"grad_clip", "optimizer", "clip the global gradient norm here; 0 = no clipping", non_negative(&C::grad_clip)},
    Field{"grid_format", "optimizer", "bit-space optimizers: the grid of weights whose :weight point is not quantized",
          TextField{&C::grid_format, false}},
    Field{"grid_embeddings", "optimizer", "bit-space optimizers: wte and wpe too (false: AdamW updates them)",
          BoolField{&C::grid_embeddings}},
    Field{"stiffness_power", "optimizer", "stiffness_adamw: p in S(w)^p; 0 is AdamW at the bit-space rate split",
          IntegerField<int>{&C::stiffness_power, 0, 2}},
    Field{"precondition", "optimizer", "stiffness_adamw: S^p multiplies the gradient (grad) or the update (update)",
          ChoiceField<Precondition>{&C::precondition, kPreconditionNames}},
    Field{"madam_p_scale", "optimizer", "madam, madam_int: weights bounded by p_scale · RMS(initial tensor)",
          RealField{&C::madam_p_scale, 0.0, kInf, true, false}},
    Field{"madam_g_bound", "optimizer", "madam, madam_int: bound on the normalized gradient",
          RealField{&C::madam_g_bound, 0.0, kInf, true, false}},
    Field{"madam_beta", "optimizer", "madam, madam_int: second-moment decay", unit_interval(&C::madam_beta, false)},
    Field{"adamw_learning_rate", "optimizer",
          "bit-space optimizers: peak rate of the tensors they leave to AdamW; 0 = learning_rate",
          non_negative(&C::adamw_learning_rate)},
    Field{"master_weights", "optimizer", "gridwalk: false keeps its weights only as codes of their grid's format",
          BoolField{&C::master_weights}},
    Field{"code_headroom", "optimizer", "code-only weights: binades between a tensor's initial largest |w| and max finite",
          IntegerField<int>{&C::code_headroom, 0, 64}},
    Field{"adam_m_format", "optimizer", "adamw: exp_avg's storage, \"fp32\" or a signed format name (docs/formats.md)",
          TextField{&C::adam_m_format, false}},
    Field{"adam_v_format", "optimizer", "adamw: exp_avg_sq's storage, \"fp32\" or a format name",
          TextField{&C::adam_v_format, false}},
    Field{"adam_state_group", "optimizer", "adamw: elements of one tensor sharing a moment scale",
          IntegerField<int>{&C::adam_state_group, 1, static_cast<std::int64_t>(optim::kMaxStateGroup)}},
    Field{"adam_state_rounding", "optimizer", "adamw: rounding of every moment write (nearest = to nearest even)",
          ChoiceField<format::Rounding>{&C::adam_state_rounding, format::kRoundingNames}},

    Field{"init_from", "warm start", "start from this run's (latest) checkpoint or this checkpoint; \"\" = fresh weights",
          TextField{&C::init_from, true}},
    Field{"init_from_step", "warm start", "the source run's checkpoint of this step; 0 = its latest",
          count_steps(&C::init_from_step)},
    Field{"init_from_checksum", "warm start", "CRC-32C of the source's model.safetensors; \"\" = unchecked",
          TextField{&C::init_from_checksum, true}},
    Field{"init_optimizer", "warm start", "carry the source's optimizer state", BoolField{&C::init_optimizer}},
    Field{"init_quant_state", "warm start", "carry its delayed-scaling histories where a point keeps its format and scaling",
          BoolField{&C::init_quant_state}},
    Field{"eval_interval", "run", "steps between evaluations", positive_steps(&C::eval_interval)},
    Field{"eval_iters", "run", "batches per split per evaluation", positive_int(&C::eval_iters)},
    Field{"log_interval", "run", "steps between metric lines", positive_steps(&C::log_interval)},
    Field{"seed", "run", "initialization and batch sampling", IntegerField<std::uint64_t>{&C::seed, 0, kInt64Max}},
    Field{"device", "run", "cpu | cuda: the engine the run computes on (docs/cuda.md)",
          ChoiceField<Device>{&C::device, kDeviceNames}},
    Field{"out_dir", "run", "run directory", TextField{&C::out_dir, false}},
    Field{"checkpoint_interval", "run", "steps between checkpoints; 0 = only at the end", count_steps(&C::checkpoint_interval)},
    Field{"keep_checkpoints", "run", "keep the K most recent checkpoints; 0 = keep all", count_int(&C::keep_checkpoints)},

    Field{"diag_interval", "diagnostics", "steps between full diagnostics (code usage, kurtosis, SNR, ...)",
          positive_steps(&C::diag_interval)},
    Field{"warn_overflow_pct", "diagnostics", "warn when a point overflows more than this % of its values",
          non_negative(&C::warn_overflow_pct)},
    Field{"warn_underflow_pct", "diagnostics", "warn when a point flushes more than this % of its values to zero",
          non_negative(&C::warn_underflow_pct)},
    Field{"warn_kurtosis", "diagnostics", "warn when a block output or a block's q, k or v has a larger kurtosis",
          non_negative(&C::warn_kurtosis)},
    Field{"warn_kurtosis_growth", "diagnostics", "warn when a matmul input's kurtosis grows past this multiple of its first",
          non_negative(&C::warn_kurtosis_growth)},
    Field{"warn_attention_entropy", "diagnostics", "warn when a head's mean attention entropy (nats) is lower",
          non_negative(&C::warn_attention_entropy)},
    Field{"warn_loss_spike", "diagnostics", "warn when the loss exceeds this multiple of the previous step's",
          RealField{&C::warn_loss_spike, 0.0, kInf, true, false}},
    Field{"warn_grad_norm_spike", "diagnostics", "warn when the gradient norm exceeds this multiple of its median",
          RealField{&C::warn_grad_norm_spike, 0.0, kInf, true, false}},
    Field{"warn_clip_rate", "diagnostics", "warn when gradient clipping fires in more than this fraction of the last 100 steps; 1 = never",
          RealField{&C::warn_clip_rate, 0.0, 1.0, false, false}},
    Field{"warn_amax_growth", "diagnostics", "warn when a point's amax grows faster than this many binades per 100 steps; 0 = never",
          non_negative(&C::warn_amax_growth)},
    Field{"warn_layer_grad_ratio", "diagnostics", "warn when the top block's gradient norm exceeds this multiple of the bottom's",
          RealField{&C::warn_layer_grad_ratio, 0.0, kInf, true, false}},
    Field{"warn_grad_snr_db", "diagnostics", "warn when a quantized gradient's SNR against FP32 is lower (dB)",
          RealField{&C::warn_grad_snr_db, -kInf, kInf, false, false}},
    Field{"warn_dead_units_pct", "diagnostics", "warn when more than this % of an MLP's hidden units are dead",
          RealField{&C::warn_dead_units_pct, 0.0, 100.0, false, false}},
    Field{"profile_points", "diagnostics", "profile every quantization point's values on diagnostic steps",
          BoolField{&C::profile_points}},
    Field{"range_fit_format", "diagnostics", "the candidate format whose range fit the profiles give",
          TextField{&C::range_fit_format, false}},
    Field{"warn_every", "diagnostics", "steps before one warning at one point repeats", positive_steps(&C::warn_every)},
    Field{"stop_loss_multiple", "diagnostics", "stop as diverged when the loss exceeds this multiple of the first step's; 0 = off",
          non_negative(&C::stop_loss_multiple)},
    Field{"target_loss", "diagnostics", "report the steps, tokens and seconds to first reach this validation loss; 0 = none",
          non_negative(&C::target_loss)},
    Field{"hessian_interval", "diagnostics", "steps between top Hessian eigenvalue estimates; 0 = never",
          count_steps(&C::hessian_interval)},
    Field{"hessian_iterations", "diagnostics", "power iterations per Hessian estimate (2 gradients each)",
          positive_int(&C::hessian_iterations)},
    Field{"hessian_epsilon", "diagnostics", "finite-difference step of the Hessian-vector products",
          RealField{&C::hessian_epsilon, 0.0, kInf, true, false}},
};

// The upper bound is left out while it is only the type's limit, unless the value went past it.
template <typename T>
std::string integer_allowed(const IntegerField<T>& spec, bool beyond_max = false) {
  const bool type_limit = spec.max == (std::is_same_v<T, int> ? kIntMax : kInt64Max);
  if (type_limit && !beyond_max) return "an integer >= " + std::to_string(spec.min);
  return "an integer in [" + std::to_string(spec.min) + ", " + std::to_string(spec.max) + "]";
}

// Numbers in messages: shortest form, without the ".0" a TOML float literal needs.
std::string plain(double value) {
  char buffer[32];
  return {buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr};
}

std::string real_allowed(const RealField& spec) {
  if (std::isinf(spec.max)) return std::string("a finite number ") + (spec.min_open ? "> " : ">= ") + plain(spec.min);
  return "a number in " + std::string(spec.min_open ? "(" : "[") + plain(spec.min) + ", " + plain(spec.max) +
         (spec.max_open ? ")" : "]");
}

template <typename Enum>
std::string choice_allowed(const ChoiceField<Enum>& spec) {
  std::string text = "one of ";
  for (std::size_t i = 0; i < spec.names.size(); ++i) text += (i ? ", " : "") + io::toml_string(spec.names[i]);
  return text;
}

// "string \"4\"", "floating-point 4.0", "table": what was found instead of the expected type.
std::string describe(const toml::node& node) {
  std::ostringstream text;
  text << node.type();
  if (node.is_string()) text << ' ' << io::toml_string(node.as_string()->get());
  else if (node.is_floating_point()) text << ' ' << io::toml_float(node.as_floating_point()->get());
  else if (node.is_value()) node.visit([&](const auto& value) { text << ' ' << value; });
  return text.str();
}

[[noreturn]] void wrong_type(const Field& field, const toml::node& node, const std::string& origin) {
  throw ConfigError(origin + ": " + std::string(field.key) + " must be " + allowed_values(field) + ", got " + describe(node));
}

std::string not_allowed(const Field& field, const std::string& literal, const std::string& allowed) {
  return std::string(field.key) + " = " + literal + " is not allowed (allowed: " + allowed + ")";
}

std::string not_allowed(const Field& field, const std::string& literal) {
  return not_allowed(field, literal, allowed_values(field));
}

template <typename T>
bool above_max(const IntegerField<T>& spec, T value) {
  if constexpr (std::is_unsigned_v<T>) return value > static_cast<std::uint64_t>(spec.max);
  else return value > spec.max;
}

template <typename T>
bool in_range(const IntegerField<T>& spec, T value) {
  if constexpr (std::is_unsigned_v<T>) {
    if (value > static_cast<std::uint64_t>(kInt64Max)) return false;
  }
  const auto wide = static_cast<std::int64_t>(value);
  return wide >= spec.min && wide <= spec.max;
}

bool in_range(const RealField& spec, double value) {
  if (!std::isfinite(value)) return false;
  const bool above = spec.min_open ? value > spec.min : value >= spec.min;
  const bool below = spec.max_open ? value < spec.max : value <= spec.max;
  return above && below;
}

template <typename T>
void read(const Field& field, const IntegerField<T>& spec, const toml::node& node, TrainConfig& config,
          const std::string& origin) {
  if (!node.is_integer()) wrong_type(field, node, origin);
  const std::int64_t value = node.as_integer()->get();
  if (value < spec.min || value > spec.max) {
    throw ConfigError(origin + ": " + not_allowed(field, std::to_string(value), integer_allowed(spec, value > spec.max)));
  }
  config.*spec.member = static_cast<T>(value);
}

void read(const Field& field, const RealField& spec, const toml::node& node, TrainConfig& config,
          const std::string& origin) {
  // An integer is accepted where a number is expected: `weight_decay = 0` means 0.0.
  if (!node.is_floating_point() && !node.is_integer()) wrong_type(field, node, origin);
  const double value = node.is_integer() ? static_cast<double>(node.as_integer()->get()) : node.as_floating_point()->get();
  if (!in_range(spec, value)) throw ConfigError(origin + ": " + not_allowed(field, io::toml_float(value)));
  config.*spec.member = value;
}

void read(const Field& field, const BoolField& spec, const toml::node& node, TrainConfig& config,
          const std::string& origin) {
  if (!node.is_boolean()) wrong_type(field, node, origin);
  config.*spec.member = node.as_boolean()->get();
}

void read(const Field& field, const TextField& spec, const toml::node& node, TrainConfig& config,
          const std::string& origin) {
  if (!node.is_string()) wrong_type(field, node, origin);
  const std::string& value = node.as_string()->get();
  if (value.empty() && !spec.may_be_empty) throw ConfigError(origin + ": " + not_allowed(field, "\"\""));
  config.*spec.member = value;
}

template <typename Enum>
void read(const Field& field, const ChoiceField<Enum>& spec, const toml::node& node, TrainConfig& config,
          const std::string& origin) {
  if (!node.is_string()) wrong_type(field, node, origin);
  const std::string& value = node.as_string()->get();
  const auto found = std::find(spec.names.begin(), spec.names.end(), value);
  if (found == spec.names.end()) throw ConfigError(origin + ": " + not_allowed(field, io::toml_string(value)));
  config.*spec.member = static_cast<Enum>(found - spec.names.begin());
}

template <typename T>
std::string literal(const IntegerField<T>& spec, const TrainConfig& config) { return std::to_string(config.*spec.member); }
std::string literal(const RealField& spec, const TrainConfig& config) { return io::toml_float(config.*spec.member); }
std::string literal(const BoolField& spec, const TrainConfig& config) { return config.*spec.member ? "true" : "false"; }
std::string literal(const TextField& spec, const TrainConfig& config) { return io::toml_string(config.*spec.member); }
template <typename Enum>
std::string literal(const ChoiceField<Enum>& spec, const TrainConfig& config) {
  const auto index = static_cast<std::size_t>(config.*spec.member);
  return index < spec.names.size() ? io::toml_string(spec.names[index]) : "<invalid " + std::to_string(index) + ">";
}

template <typename T>
bool valid(const IntegerField<T>& spec, const TrainConfig& config) { return in_range(spec, config.*spec.member); }
bool valid(const RealField& spec, const TrainConfig& config) { return in_range(spec, config.*spec.member); }
bool valid(const BoolField&, const TrainConfig&) { return true; }
bool valid(const TextField& spec, const TrainConfig& config) { return spec.may_be_empty || !(config.*spec.member).empty(); }
template <typename Enum>
bool valid(const ChoiceField<Enum>& spec, const TrainConfig& config) {
  return static_cast<std::size_t>(config.*spec.member) < spec.names.size();
}

// What the message about the value in `config` should list as allowed.
template <typename Spec>
std::string allowed_now(const Field& field, const Spec&, const TrainConfig&) {
  return allowed_values(field);
}
template <typename T>
std::string allowed_now(const Field&, const IntegerField<T>& spec, const TrainConfig& config) {
  return integer_allowed(spec, above_max(spec, config.*spec.member));
}

}  // namespace

std::span<const Field> fields() { return kFields; }

const Field* find_field(std::string_view key) {
  const auto found = std::find_if(kFields.begin(), kFields.end(), [&](const Field& f) { return f.key == key; });
  return found == kFields.end() ? nullptr : &*found;
}

std::string allowed_values(const Field& field) {
  return std::visit(
      [](const auto& spec) -> std::string {
        using Spec = std::decay_t<decltype(spec)>;
        if constexpr (std::is_same_v<Spec, RealField>) return real_allowed(spec);
        else if constexpr (std::is_same_v<Spec, BoolField>) return "true or false";
        else if constexpr (std::is_same_v<Spec, TextField>) return spec.may_be_empty ? "a string" : "a non-empty string";
        else if constexpr (requires { spec.names; }) return choice_allowed(spec);
        else return integer_allowed(spec);
      },
      field.type);
}

void read_value(const Field& field, const toml::node& node, TrainConfig& config, const std::string& origin) {
  std::visit([&](const auto& spec) { read(field, spec, node, config, origin); }, field.type);
}

std::optional<std::string> value_problem(const Field& field, const TrainConfig& config) {
  return std::visit(
      [&](const auto& spec) -> std::optional<std::string> {
        if (valid(spec, config)) return std::nullopt;
        return not_allowed(field, value_literal(field, config), allowed_now(field, spec, config));
      },
      field.type);
}

std::string value_literal(const Field& field, const TrainConfig& config) {
  return std::visit([&](const auto& spec) { return literal(spec, config); }, field.type);
}

}  // namespace altgrad::config::schema
