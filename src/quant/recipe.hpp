#pragma once
// A quantization recipe: for every quantization point of a model (matmul operands, attention
// operands), whether it is quantized and how — format, rounding, scaling.
//
// A recipe is written as role defaults plus overrides. The three roles are the operands of a
// matmul Y = X·Wᵀ: act (X), weight (W) and grad (dY); attention operands (q, k, v, probs) take the
// act role's settings. Block matmul points follow their role's `enabled`; the LM head and the
// attention operands are off unless an override switches them on. Overrides select points by a
// glob on the point name (`*` any run of characters, `?` one, `[...]` a set), apply the settings
// they name, and switch the point on unless they say `enabled = false`; later overrides win.
//
// Presets (fp32, bf16, fp8-hybrid, fp8-e4m3, mx8, fp8-hopper) are recipes of the same form; a config
// starts from one and changes role settings or adds overrides on top.
//
// A recipe also says how each of a Linear layer's three GEMMs adds its products (`accumulate`,
// format/accumulator.hpp): FP32 by default, or a tensor core's aligned accumulation. It applies to
// a GEMM whose two operands are both quantized points (config/quant_recipe.hpp).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "format/accumulator.hpp"
#include "format/rounding.hpp"
#include "format/spec.hpp"
#include "quant/mx.hpp"
#include "quant/scaling.hpp"

namespace altgrad::quant {

class RecipeError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class Scaling : std::uint8_t {
  none,     // x_q = Q(x)
  tensor,   // per-tensor current scaling: amax of this tensor
  delayed,  // per-tensor delayed scaling: amax history of earlier steps
  block,    // MX: one power-of-two scale per block along the reading GEMM's reduction dimension
};

enum class Role : std::uint8_t { act, weight, grad };
inline constexpr std::size_t kRoleCount = 3;

format::Format default_format();  // e4m3

// The three GEMMs of a Linear layer Y = X·Wᵀ: forward Y = X·Wᵀ, dgrad dX = dY·W, wgrad dW = dYᵀ·X.
enum class Gemm : std::uint8_t { forward, dgrad, wgrad };
inline constexpr std::size_t kGemmCount = 3;
inline constexpr std::array<std::string_view, kGemmCount> kGemmNames = {"forward", "dgrad", "wgrad"};
std::string_view gemm_name(Gemm gemm);
std::optional<Gemm> parse_gemm(std::string_view name);
// The two operands a GEMM reads, as roles: forward act and weight, dgrad grad and weight, wgrad
// grad and act.
std::array<Role, 2> gemm_operands(Gemm gemm);

// How each GEMM adds its products, by Gemm.
using GemmAccumulation = std::array<format::AccumulatorModel, kGemmCount>;
// Transformer Engine's choice on Hopper: fast accumulation (no promotion) in the forward GEMM,
// promotion to FP32 every 128 elements of K in dgrad and wgrad (its _2X_ACC_FPROP = False,
// _2X_ACC_DGRAD = _2X_ACC_WGRAD = True, transformer_engine/pytorch/module/base.py).
GemmAccumulation hopper_te();
// A whole recipe's accumulation from one name: "hopper_te", or one model for all three GEMMs
// (format::parse_accumulator). Throws format::AccumulatorError naming the valid forms.
GemmAccumulation parse_gemm_accumulation(std::string_view text);
// A single GEMM's model (format::parse_accumulator), with a pointer to the whole-recipe form when
// given "hopper_te". Throws format::AccumulatorError.
format::AccumulatorModel parse_gemm_accumulator(std::string_view text);
// Whether any GEMM's model is not FP32's.
bool emulated(const GemmAccumulation& accumulation);

// How one point is quantized.
struct PointSettings {
  bool enabled = false;
  std::string format_name = "e4m3";
  format::Format format = default_format();
  format::Rounding rounding = format::Rounding::nearest_even;
  Scaling scaling = Scaling::none;
  std::size_t history = 16;  // delayed: amax history length
  AmaxAlgorithm amax = AmaxAlgorithm::max;
  int margin = 0;             // tensor, delayed: scale = max_finite / (amax · 2^margin)
  std::size_t block = 32;     // block: elements per block
  MxScaleRule scale_rule = MxScaleRule::floor;

  bool operator==(const PointSettings& o) const;
};

// Settings a role table or an override names; the others are left as they are.
struct SettingsPatch {
  std::optional<bool> enabled;
  std::optional<std::string> format;  // a format name (format/parse.hpp), checked when applied
  std::optional<format::Rounding> rounding;
  std::optional<Scaling> scaling;
  std::optional<std::size_t> history;
  std::optional<AmaxAlgorithm> amax;
  std::optional<int> margin;
  std::optional<std::size_t> block;
  std::optional<MxScaleRule> scale_rule;

  // Throws RecipeError (prefixed by `where`) on a bad format name or a value out of range.
  void apply_to(PointSettings& settings, std::string_view where) const;
};

struct Override {
  std::string match;  // glob over point names
  SettingsPatch patch;
  std::string origin;  // "configs/x.toml:12" or "preset fp8-hybrid", for messages
};

struct RecipeSpec {
  std::string preset = "fp32";
  std::array<PointSettings, kRoleCount> roles{};  // by Role
  std::vector<Override> overrides;
  GemmAccumulation accumulate{};                          // by Gemm; all FP32 by default
  std::array<std::string, kGemmCount> accumulate_origin;  // where each GEMM's model was set, for messages
};

// The preset names, in the order docs and errors list them.
std::span<const std::string_view> preset_names();
// Throws RecipeError naming the valid presets.
RecipeSpec preset(std::string_view name);

// A point to resolve: its name and the role whose defaults it takes.
struct PointName {
  std::string_view name;
  Role role;
  bool on_by_default;  // false: the LM head and the attention operands
};

struct ResolvedPoint {
  std::string name;
  PointSettings settings;
};

// Every point with its settings, in the order given. Throws RecipeError when an override matches
// no point (the message names its origin and shows example point names).
std::vector<ResolvedPoint> resolve(const RecipeSpec& spec, std::span<const PointName> points);

// Names for the enums, as configs spell them, in enum order.
inline constexpr std::array<std::string_view, 4> kScalingNames = {"none", "tensor", "delayed", "block"};
inline constexpr std::array<std::string_view, 2> kAmaxNames = {"max", "most_recent"};
inline constexpr std::array<std::string_view, 2> kScaleRuleNames = {"floor", "round_up"};
std::string_view scaling_name(Scaling s);
std::optional<Scaling> parse_scaling(std::string_view name);
std::string_view amax_name(AmaxAlgorithm a);
std::optional<AmaxAlgorithm> parse_amax(std::string_view name);
std::string_view scale_rule_name(MxScaleRule r);
std::optional<MxScaleRule> parse_scale_rule(std::string_view name);

}  // namespace altgrad::quant
