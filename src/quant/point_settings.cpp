#include "quant/point_settings.hpp"

#include "format/parse.hpp"
#include "quant/block_scale.hpp"

namespace altgrad::quant {
namespace {

template <typename Enum, std::size_t N>
std::optional<Enum> parse_name(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace

format::Format default_format() { return format::make_format(format::parse_format("e4m3")); }

bool PointSettings::operator==(const PointSettings& o) const {
  return enabled == o.enabled && format_name == o.format_name && rounding == o.rounding && scaling == o.scaling &&
         history == o.history && amax == o.amax && margin == o.margin && block == o.block &&
         scale_rule == o.scale_rule && scale_format == o.scale_format && sr_bits == o.sr_bits &&
         tiles == o.tiles;
}

float per_tensor_scale(BlockScaleFormat scale_format, float scale) {
  return scale_format == BlockScaleFormat::fp32_pow2 ? power_of_two_scale(scale) : scale;
}

std::string_view scaling_name(Scaling s) { return kScalingNames[static_cast<std::size_t>(s)]; }
std::optional<Scaling> parse_scaling(std::string_view name) { return parse_name<Scaling>(kScalingNames, name); }
std::string_view amax_name(AmaxAlgorithm a) { return kAmaxNames[static_cast<std::size_t>(a)]; }
std::optional<AmaxAlgorithm> parse_amax(std::string_view name) { return parse_name<AmaxAlgorithm>(kAmaxNames, name); }
std::string_view scale_rule_name(MxScaleRule r) { return kScaleRuleNames[static_cast<std::size_t>(r)]; }
std::optional<MxScaleRule> parse_scale_rule(std::string_view name) {
  return parse_name<MxScaleRule>(kScaleRuleNames, name);
}
std::string_view scale_format_name(BlockScaleFormat f) { return kScaleFormatNames[static_cast<std::size_t>(f)]; }
std::optional<BlockScaleFormat> parse_scale_format(std::string_view name) {
  return parse_name<BlockScaleFormat>(kScaleFormatNames, name);
}

}  // namespace altgrad::quant
