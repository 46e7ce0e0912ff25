#include "recipe/recipe_spec.hpp"

#include <algorithm>
#include <array>
#include <fnmatch.h>

#include "format/parse.hpp"
#include "quant/tiles.hpp"

namespace altgrad::recipe {
namespace {

using quant::PointSettings;
using quant::Scaling;
using quant::SettingsError;
using quant::kMaxMxBlock;

constexpr std::array<std::string_view, 14> kPresetNames = {
    "fp32", "bf16", "fp8-hybrid", "fp8-e4m3", "mx8", "fp8-hopper",                     // AltGrad's
    "te-delayed", "te-current", "te-mxfp8", "te-float8-block", "te-nvfp4",             // Transformer Engine's
    "tseng-mxfp4", "torchao-rowwise", "torchao-rowwise-gw-hp"};                        // the papers' and torchao's

// Limits that keep a typo from allocating gigabytes or shifting a scale out of FP32.
constexpr std::size_t kMaxHistory = 1024;
constexpr int kMaxMargin = 64;

format::Format parse_point_format(const std::string& name, std::string_view where) {
  try {
    const format::FormatSpec spec = format::parse_format(name);
    if (const std::string why = format::validation_error(spec); !why.empty()) throw format::FormatError(why);
    return format::make_format(spec);
  } catch (const format::FormatError& e) {
    throw SettingsError(std::string(where) + ": format \"" + name + "\": " + e.what());
  }
}

PointSettings role_settings(std::string_view format_name, Scaling scaling) {
  PointSettings s;
  SettingsPatch patch;
  patch.enabled = true;
  patch.format = std::string(format_name);
  patch.scaling = scaling;
  patch.apply_to(s, "preset");
  return s;
}

RecipeSpec uniform_preset(std::string_view name, std::string_view act_weight, std::string_view grad, Scaling scaling) {
  RecipeSpec spec;
  spec.preset = std::string(name);
  spec.roles[static_cast<std::size_t>(Role::act)] = role_settings(act_weight, scaling);
  spec.roles[static_cast<std::size_t>(Role::weight)] = role_settings(act_weight, scaling);
  spec.roles[static_cast<std::size_t>(Role::grad)] = role_settings(grad, scaling);
  return spec;
}

// Every operand in `format` with `scale_format` scales per `block` elements, a weight's per
// `block` × `block` tile (so that W and Wᵀ share them): TE's Float8BlockScaling and NVFP4's layout.
RecipeSpec tiled_block_preset(std::string_view name, std::string_view format, std::size_t block,
                              quant::BlockScaleFormat scale_format) {
  RecipeSpec spec = uniform_preset(name, format, format, Scaling::block);
  for (PointSettings& role : spec.roles) {
    role.block = block;
    role.scale_format = scale_format;
  }
  spec.roles[static_cast<std::size_t>(Role::weight)].tiles = true;
  return spec;
}

// Tseng et al. 2025 (arXiv:2502.20586), their recipe (RHT + SR): the forward GEMM in BF16, both
// backward GEMMs in MXFP4 (E2M1 in blocks of 32 along the GEMM's reduction axis, E8M0 scales by
// the floor rule with the elements at a further 3/4), stochastically rounded, after a 64-point
// random Hadamard transform of both operands along that axis. dY is read by the backward GEMMs
// only; X's wgrad copy and W's dgrad copy are per-GEMM settings (docs/quantization.md).
RecipeSpec tseng_preset(std::string_view name) {
  RecipeSpec spec = uniform_preset(name, "bf16,overflow=inf", "e2m1", Scaling::none);
  SettingsPatch mxfp4_sr;
  mxfp4_sr.format = "e2m1";
  mxfp4_sr.scaling = Scaling::block;
  mxfp4_sr.block = 32;
  mxfp4_sr.scale_rule = quant::MxScaleRule::three_quarters;
  mxfp4_sr.rounding = format::Rounding::stochastic;
  mxfp4_sr.apply_to(spec.roles[static_cast<std::size_t>(Role::grad)], "preset");
  const std::string origin = "preset " + std::string(name);
  spec.overrides.push_back({"h.*:act", mxfp4_sr, origin, Gemm::wgrad});
  spec.overrides.push_back({"h.*:weight", mxfp4_sr, origin, Gemm::dgrad});
  spec.hadamard.gemms[static_cast<std::size_t>(Gemm::dgrad)] = true;
  spec.hadamard.gemms[static_cast<std::size_t>(Gemm::wgrad)] = true;
  spec.hadamard.size = 64;
  spec.hadamard.signs = HadamardSigns::seeded;
  spec.hadamard.origin = origin;
  return spec;
}

// torchao's float8 training recipes (torchao/float8/config.py, Float8LinearConfig.from_recipe_name):
// "rowwise" takes X, W and dY in E4M3 with one scale per row along each GEMM's reduction axis
// (axiswise), FP32 scales rounded down to a power of two; "rowwise_with_gw_hp" keeps its forward and
// dY, reads W in dgrad with one such scale for the whole tensor, and runs wgrad on unquantized X
// and dY.
RecipeSpec torchao_rowwise_preset(std::string_view name, bool weight_gradient_in_high_precision) {
  RecipeSpec spec = uniform_preset(name, "e4m3", "e4m3", Scaling::block);
  for (PointSettings& role : spec.roles) {
    role.block = quant::kAxisBlock;
    role.scale_format = quant::BlockScaleFormat::fp32_pow2;
  }
  if (!weight_gradient_in_high_precision) return spec;
  const std::string origin = "preset " + std::string(name);
  SettingsPatch tensorwise;
  tensorwise.scaling = Scaling::tensor;
  tensorwise.scale_format = quant::BlockScaleFormat::fp32_pow2;
  SettingsPatch off;
  off.enabled = false;
  spec.overrides.push_back({"h.*:weight", tensorwise, origin, Gemm::dgrad});
  spec.overrides.push_back({"h.*:act", off, origin, Gemm::wgrad});
  spec.overrides.push_back({"h.*:grad", off, origin, Gemm::wgrad});
  return spec;
}

// A block as configs spell it.
std::string block_text(std::size_t block) {
  return block == quant::kAxisBlock ? "\"" + std::string(quant::kAxisBlockName) + "\"" : std::to_string(block);
}

}  // namespace

void SettingsPatch::apply_to(PointSettings& s, std::string_view where) const {
  if (history && (*history < 1 || *history > kMaxHistory)) {
    throw SettingsError(std::string(where) + ": history = " + std::to_string(*history) + " is outside [1, " +
                        std::to_string(kMaxHistory) + "]");
  }
  if (block && *block != quant::kAxisBlock && *block > kMaxMxBlock) {
    throw SettingsError(std::string(where) + ": block = " + std::to_string(*block) + " is outside [1, " +
                        std::to_string(kMaxMxBlock) + "]");
  }
  if (margin && (*margin < -kMaxMargin || *margin > kMaxMargin)) {
    throw SettingsError(std::string(where) + ": margin = " + std::to_string(*margin) + " is outside [-" +
                        std::to_string(kMaxMargin) + ", " + std::to_string(kMaxMargin) + "]");
  }
  if (format) {
    s.format = parse_point_format(*format, where);
    s.format_name = format::format_name(s.format.spec);
  }
  s.enabled = enabled.value_or(true);  // naming settings switches the point on unless told otherwise
  if (rounding) s.rounding = *rounding;
  if (scaling) s.scaling = *scaling;
  // Naming a per-tensor scaling without a scale format starts it from FP32: a power of two left
  // over from a block preset (fp32_pow2) does not carry over unasked.
  if (scaling && *scaling != Scaling::block && !scale_format) s.scale_format = quant::BlockScaleFormat::e8m0;
  if (history) s.history = *history;
  if (amax) s.amax = *amax;
  if (margin) s.margin = *margin;
  if (block) s.block = *block;
  if (scale_format) {
    s.scale_format = *scale_format;
    if (!quant::takes_scale_rule(*scale_format)) s.scale_rule = quant::MxScaleRule::floor;
  }
  if (scale_rule && !quant::takes_scale_rule(s.scale_format)) {
    throw SettingsError(std::string(where) + ": scale_rule = " + std::string(quant::scale_rule_name(*scale_rule)) +
                        " does not apply to scale_format = " + std::string(quant::scale_format_name(s.scale_format)) +
                        ", whose scale has no rule to choose (docs/formats.md); remove scale_rule or use e8m0");
  }
  if (scale_rule) s.scale_rule = *scale_rule;
  if (sr_bits && (*sr_bits < 1 || *sr_bits > quant::kMaxRandomBits)) {
    throw SettingsError(std::string(where) + ": sr_bits = " + std::to_string(*sr_bits) + " is outside [1, " +
                        std::to_string(quant::kMaxRandomBits) + "]");
  }
  if (rounding && !sr_bits) s.sr_bits = quant::kMaxRandomBits;
  if (sr_bits && s.rounding != format::Rounding::stochastic) {
    throw SettingsError(std::string(where) + ": sr_bits = " + std::to_string(*sr_bits) + " applies to rounding = " +
                        "\"stochastic\", not \"" + std::string(format::rounding_name(s.rounding)) +
                        "\" (docs/quantization.md); remove sr_bits or round stochastically");
  }
  if (sr_bits) s.sr_bits = *sr_bits;
  if (scaling && !tiles) s.tiles = false;
  if (tiles) s.tiles = *tiles;
  if (s.tiles && s.scaling != Scaling::block) {
    throw SettingsError(std::string(where) + ": tile = true needs scaling = \"block\", not \"" +
                        std::string(quant::scaling_name(s.scaling)) + "\" (docs/quantization.md)");
  }
  if (s.tiles && (s.block == quant::kAxisBlock || s.block > quant::kMaxTile)) {
    throw SettingsError(std::string(where) + ": block = " + block_text(s.block) +
                        " with tile = true: a tile's side is 1.." + std::to_string(quant::kMaxTile));
  }
  if (s.tiles && s.scale_format == quant::BlockScaleFormat::e4m3 && s.block * s.block > kMaxMxBlock) {
    throw SettingsError(std::string(where) + ": block = " + std::to_string(s.block) + " with tile = true and " +
                        "scale_format = \"e4m3\": an E4M3-scaled block holds at most " + std::to_string(kMaxMxBlock) +
                        " elements, a tile's side at most 32");
  }
  if (s.scaling == Scaling::block && s.block == quant::kAxisBlock && s.scale_format == quant::BlockScaleFormat::e4m3) {
    throw SettingsError(std::string(where) + ": block = \"axis\" with scale_format = \"e4m3\": NVFP4's E4M3 "
                        "scales are per block of at most " + std::to_string(kMaxMxBlock) +
                        "; use e8m0, fp32 or fp32_pow2 for one scale per reduction axis");
  }
  if (s.scaling == Scaling::delayed && s.scale_format == quant::BlockScaleFormat::fp32_pow2) {
    throw SettingsError(std::string(where) + ": scale_format = \"fp32_pow2\" with scaling = \"delayed\": a "
                        "delayed scale stays FP32; the power of two applies to tensor and block scaling");
  }
}

std::string_view gemm_name(Gemm gemm) { return kGemmNames[static_cast<std::size_t>(gemm)]; }
std::optional<Gemm> parse_gemm(std::string_view name) {
  const auto found = std::find(kGemmNames.begin(), kGemmNames.end(), name);
  if (found == kGemmNames.end()) return std::nullopt;
  return static_cast<Gemm>(found - kGemmNames.begin());
}

std::array<Role, 2> gemm_operands(Gemm gemm) {
  switch (gemm) {
    case Gemm::forward:
      return {Role::act, Role::weight};
    case Gemm::dgrad:
      return {Role::grad, Role::weight};
    case Gemm::wgrad:
      break;
  }
  return {Role::grad, Role::act};
}

GemmAccumulation hopper_te() {
  return {format::hopper_fp8(/*fast_accumulation=*/true), format::hopper_fp8(false), format::hopper_fp8(false)};
}

GemmAccumulation parse_gemm_accumulation(std::string_view text) {
  if (text == "hopper_te") return hopper_te();
  try {
    const format::AccumulatorModel model = format::parse_accumulator(text);
    return {model, model, model};
  } catch (const format::AccumulatorError& e) {
    throw format::AccumulatorError(std::string(e.what()) +
                                   "; for all three GEMMs also hopper_te (forward hopper_fast, dgrad, wgrad hopper)");
  }
}

format::AccumulatorModel parse_gemm_accumulator(std::string_view text) {
  if (text == "hopper_te") {
    throw format::AccumulatorError(
        "accumulator \"hopper_te\" names all three GEMMs' models (forward hopper_fast, dgrad and wgrad hopper): "
        "give it as the whole recipe's accumulate, or name one model per GEMM");
  }
  return format::parse_accumulator(text);
}

bool emulated(const GemmAccumulation& accumulation) {
  return std::any_of(accumulation.begin(), accumulation.end(), [](const auto& m) { return m.emulated(); });
}

std::span<const std::string_view> preset_names() { return kPresetNames; }

RecipeSpec preset(std::string_view name) {
  if (name == "fp32") return RecipeSpec{};
  if (name == "bf16") {
    // Autocast-style: every matmul operand in bf16, the LM head included, rounded as PyTorch's
    // float32 → bfloat16 conversion does (nearest-even, overflow to ±Inf).
    RecipeSpec spec = uniform_preset(name, "bf16,overflow=inf", "bf16,overflow=inf", Scaling::none);
    spec.overrides.push_back({"lm_head:*", SettingsPatch{}, "preset bf16", std::nullopt});
    return spec;
  }
  // FP8 recipes leave the LM head in FP32, as Transformer Engine leaves the output layer in
  // higher precision; an override can switch it on.
  if (name == "fp8-hybrid") return uniform_preset(name, "e4m3", "e5m2", Scaling::delayed);
  if (name == "fp8-e4m3") return uniform_preset(name, "e4m3", "e4m3", Scaling::delayed);
  if (name == "mx8") return uniform_preset(name, "e4m3", "e4m3", Scaling::block);
  if (name == "fp8-hopper") {
    // fp8-hybrid with the GEMMs' accumulation as Transformer Engine runs them on Hopper.
    RecipeSpec spec = uniform_preset(name, "e4m3", "e5m2", Scaling::delayed);
    spec.accumulate = hopper_te();
    spec.accumulate_origin.fill("preset fp8-hopper");
    return spec;
  }
  // Transformer Engine's recipes as their defaults set them (transformer_engine/common/recipe/
  // __init__.py; docs/quantization.md, "Presets"): DelayedScaling and Float8CurrentScaling in the
  // HYBRID format (E4M3 forward, E5M2 gradients), MXFP8BlockScaling in E4M3 with 32-element blocks
  // whose E8M0 scale rounds up; Float8BlockScaling and NVFP4BlockScaling below.
  if (name == "te-delayed") {
    RecipeSpec spec = uniform_preset(name, "e4m3", "e5m2", Scaling::delayed);
    for (PointSettings& role : spec.roles) role.history = 1024;  // its amax_history_len
    return spec;
  }
  if (name == "te-current") return uniform_preset(name, "e4m3", "e5m2", Scaling::tensor);
  if (name == "te-mxfp8") {
    RecipeSpec spec = uniform_preset(name, "e4m3", "e4m3", Scaling::block);
    for (PointSettings& role : spec.roles) role.scale_rule = quant::MxScaleRule::round_up;
    return spec;
  }
  // Float8BlockScaling: E4M3 everywhere, FP32 power-of-two scales per 1 × 128 block of activations
  // and gradients and per 128 × 128 tile of a weight.
  if (name == "te-float8-block") return tiled_block_preset(name, "e4m3", 128, quant::BlockScaleFormat::fp32_pow2);
  // NVFP4BlockScaling: E2M1 with E4M3 scales per 16 under an FP32 tensor scale, 16 × 16 weight
  // tiles, gradients rounded stochastically with 8 random bits, and a 16-point random Hadamard
  // transform with TE's signs on both operands of the weight-gradient GEMM.
  if (name == "te-nvfp4") {
    RecipeSpec spec = tiled_block_preset(name, "e2m1", 16, quant::BlockScaleFormat::e4m3);
    PointSettings& grad = spec.roles[static_cast<std::size_t>(Role::grad)];
    grad.rounding = format::Rounding::stochastic;
    grad.sr_bits = 8;
    spec.hadamard.gemms[static_cast<std::size_t>(Gemm::wgrad)] = true;
    spec.hadamard.size = 16;
    spec.hadamard.signs = HadamardSigns::te;
    spec.hadamard.origin = "preset te-nvfp4";
    return spec;
  }
  if (name == "tseng-mxfp4") return tseng_preset(name);
  if (name == "torchao-rowwise") return torchao_rowwise_preset(name, false);
  if (name == "torchao-rowwise-gw-hp") return torchao_rowwise_preset(name, true);
  std::string valid;
  for (const auto p : kPresetNames) valid += (valid.empty() ? "" : ", ") + std::string(p);
  throw RecipeError("unknown preset \"" + std::string(name) + "\" (presets: " + valid + ")");
}

bool reads(Gemm gemm, Role role) {
  const std::array<Role, 2> operands = gemm_operands(gemm);
  return operands[0] == role || operands[1] == role;
}

namespace {

// The first few names and the last: the model's naming without listing every point.
std::string example_names(std::span<const ResolvedPoint> resolved) {
  std::string examples;
  for (std::size_t i = 0; i < resolved.size() && i < 3; ++i) examples += (i > 0 ? ", " : "") + resolved[i].name;
  if (resolved.size() > 3) examples += ", …, " + resolved.back().name;
  return examples;
}

// A GEMM's copy under delayed scaling, whose amax history is one per point: refused, prefixed by
// `where` (the override's origin, or the point's name).
void check_copy_scaling(const quant::PointSettings& copy, Gemm gemm, const std::string& where) {
  if (!copy.enabled || copy.scaling != quant::Scaling::delayed) return;
  const std::string name(gemm_name(gemm));
  throw RecipeError(where + " (" + name + " copy): scaling = delayed: a per-GEMM copy takes a scaling without " +
                    "history (none, tensor or block), since delayed scaling keeps one amax history per point; give " +
                    "the override with gemm = \"" + name + "\" a scaling");
}

// An override without `gemm` patches every copy of its points; with one, only that GEMM's copy of
// the Linear operands it reads. Returns whether it patched any point.
bool apply_override(const Override& o, std::span<ResolvedPoint> resolved, std::span<const PointName> points) {
  bool matched = false;
  for (std::size_t i = 0; i < resolved.size(); ++i) {
    ResolvedPoint& point = resolved[i];
    if (fnmatch(o.match.c_str(), point.name.c_str(), 0) != 0) continue;
    if (o.gemm && (!points[i].linear || !reads(*o.gemm, points[i].role))) continue;
    if (!o.gemm) o.patch.apply_to(point.settings, o.origin);
    for (std::size_t g = 0; g < kGemmCount; ++g) {
      auto& copy = point.by_gemm[g];
      const bool named = o.gemm && static_cast<std::size_t>(*o.gemm) == g;
      if (named && !copy) copy = point.settings;
      if (!copy || (o.gemm && !named)) continue;
      o.patch.apply_to(*copy, o.origin);
      check_copy_scaling(*copy, static_cast<Gemm>(g), o.origin + ": " + point.name);
    }
    matched = true;
  }
  return matched;
}

void check_point(const ResolvedPoint& point, const PointName& name) {
  const auto check = [&](const quant::PointSettings& s, std::string_view copy) {
    if (s.enabled && s.tiles && name.role != Role::weight) {
      throw RecipeError(point.name + std::string(copy) + ": tile = true: 2-D tiles are a weight's, which its two " +
                        "GEMMs read as W and its transpose; activations, gradients and attention operands are " +
                        "blocked along each GEMM's reduction axis (docs/quantization.md)");
    }
  };
  check(point.settings, "");
  for (std::size_t g = 0; g < kGemmCount; ++g) {
    const auto& copy = point.by_gemm[g];
    if (!copy) continue;
    const std::string label = " (" + std::string(kGemmNames[g]) + " copy)";
    if (!name.linear || !reads(static_cast<Gemm>(g), name.role)) {
      throw RecipeError(point.name + label + ": the " + std::string(kGemmNames[g]) + " GEMM does not read this operand");
    }
    check(*copy, label);
    check_copy_scaling(*copy, static_cast<Gemm>(g), point.name);
  }
}

}  // namespace

void check_points(std::span<const ResolvedPoint> resolved, std::span<const PointName> points) {
  for (std::size_t i = 0; i < resolved.size(); ++i) check_point(resolved[i], points[i]);
}

std::vector<ResolvedPoint> resolve(const RecipeSpec& spec, std::span<const PointName> points) {
  std::vector<ResolvedPoint> resolved;
  resolved.reserve(points.size());
  for (const PointName& point : points) {
    PointSettings s = spec.roles[static_cast<std::size_t>(point.role)];
    if (!point.on_by_default) s.enabled = false;
    resolved.push_back({std::string(point.name), s, {}});
  }
  for (const Override& o : spec.overrides) {
    if (apply_override(o, resolved, points)) continue;
    if (o.gemm) {
      const std::array<Role, 2> operands = gemm_operands(*o.gemm);
      throw RecipeError(o.origin + ": match = \"" + o.match + "\" selects no Linear operand that the " +
                        std::string(gemm_name(*o.gemm)) + " GEMM reads (it reads :" +
                        std::string(kRoleNames[static_cast<std::size_t>(operands[0])]) + " and :" +
                        std::string(kRoleNames[static_cast<std::size_t>(operands[1])]) +
                        " points; points are named " + example_names(resolved) + ")");
    }
    throw RecipeError(o.origin + ": match = \"" + o.match + "\" selects no quantization point (points are named " +
                      example_names(resolved) + ")");
  }
  for (std::size_t i = 0; i < resolved.size(); ++i) {
    // A copy whose settings came out as the point's is no copy of its own.
    for (auto& copy : resolved[i].by_gemm) {
      if (copy && *copy == resolved[i].settings) copy.reset();
    }
  }
  check_points(resolved, points);
  return resolved;
}

}  // namespace altgrad::recipe
