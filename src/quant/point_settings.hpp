#pragma once
// How one quantization point is quantized: format, rounding, scaling and the scaling's knobs, with
// the names configs spell them by. Which point gets which settings is a recipe's business
// (recipe/recipe_spec.hpp); the per-point quantizer (point_quantizer.hpp) only reads them.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "format/rounding.hpp"
#include "format/spec.hpp"
#include "quant/mx.hpp"
#include "quant/scaling.hpp"

namespace altgrad::quant {

// A setting out of range or a format that does not parse; the message says where it was set.
class SettingsError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class Scaling : std::uint8_t {
  none,     // x_q = Q(x)
  tensor,   // per-tensor current scaling: amax of this tensor
  delayed,  // per-tensor delayed scaling: amax history of earlier steps
  block,    // one scale per block along the reading GEMM's reduction dimension (MX by default)
};

format::Format default_format();  // e4m3

// `block` for one block along the whole reduction axis of the GEMM that reads the copy (a row of X
// or W for the forward GEMM, a column over all of a micro-batch's tokens for wgrad): torchao's
// axiswise ("rowwise") scaling. Configs spell it block = "axis".
inline constexpr std::size_t kAxisBlock = 0;
inline constexpr std::string_view kAxisBlockName = "axis";

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
  std::size_t block = 32;     // block: elements per block, or kAxisBlock
  MxScaleRule scale_rule = MxScaleRule::floor;  // block, scale_format e8m0 only
  // block: the blocks' scale format; tensor: fp32_pow2 rounds the scale down to a power of two
  // (per_tensor_scale), any other leaves it FP32
  BlockScaleFormat scale_format = BlockScaleFormat::e8m0;
  int sr_bits = kMaxRandomBits;  // stochastic rounding only: random bits per element (random_bits.hpp)
  bool tiles = false;  // block: blocks are block × block tiles of the matrix (quant/tiles.hpp), weights only

  bool operator==(const PointSettings& o) const;
};

// Names for the enums, as configs spell them, in enum order.
inline constexpr std::array<std::string_view, 4> kScalingNames = {"none", "tensor", "delayed", "block"};
inline constexpr std::array<std::string_view, 2> kAmaxNames = {"max", "most_recent"};
inline constexpr std::array<std::string_view, 5> kScaleRuleNames = {"floor", "round_up", "ceil", "even",
                                                                    "three_quarters"};
inline constexpr std::array<std::string_view, 4> kScaleFormatNames = {"e8m0", "fp32", "fp32_pow2", "e4m3"};
std::string_view scaling_name(Scaling s);
std::optional<Scaling> parse_scaling(std::string_view name);
std::string_view amax_name(AmaxAlgorithm a);
std::optional<AmaxAlgorithm> parse_amax(std::string_view name);
std::string_view scale_rule_name(MxScaleRule r);
std::optional<MxScaleRule> parse_scale_rule(std::string_view name);
std::string_view scale_format_name(BlockScaleFormat f);
std::optional<BlockScaleFormat> parse_scale_format(std::string_view name);
// The block length along a reduction run of `run` elements: `block`, or the whole run for kAxisBlock.
constexpr std::size_t block_length(const PointSettings& s, std::size_t run) {
  return s.block == kAxisBlock ? run : s.block;
}

// A per-tensor scale as the point multiplies by it: under scale_format fp32_pow2 rounded down to a
// power of two (its mantissa bits cleared: torchao's round_scales_to_power_of_2, TE's power_2_scale).
float per_tensor_scale(BlockScaleFormat scale_format, float scale);

// Whether a scale rule chooses the scale: only the E8M0 format's power of two has one; the others
// are fixed by their definitions (docs/formats.md).
constexpr bool takes_scale_rule(BlockScaleFormat f) { return f == BlockScaleFormat::e8m0; }

}  // namespace altgrad::quant
