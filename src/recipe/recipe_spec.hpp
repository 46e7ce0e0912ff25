#pragma once
// A quantization recipe as written: for every quantization point of a model (matmul operands,
// attention operands), whether it is quantized and how — format, rounding, scaling.
//
// A recipe is written as role defaults plus overrides. The three roles are the operands of a
// matmul Y = X·Wᵀ: act (X), weight (W) and grad (dY); attention operands (q, k, v, probs) take the
// act role's settings. Block matmul points follow their role's `enabled`; the LM head and the
// attention operands are off unless an override switches them on. Overrides select points by a
// glob on the point name (`*` any run of characters, `?` one, `[...]` a set), apply the settings
// they name, and switch the point on unless they say `enabled = false`; later overrides win.
//
// Presets (fp32, bf16, fp8-hybrid, fp8-e4m3, mx8, fp8-hopper, Transformer Engine's te-delayed,
// te-current, te-mxfp8, te-float8-block, te-nvfp4, and Tseng et al.'s tseng-mxfp4) are recipes of
// the same form; a config starts from one and changes role settings or adds overrides on top. An
// override can name one GEMM (`gemm`): its settings then hold only for the copy that GEMM reads of
// the Linear operands it selects (ResolvedPoint::by_gemm).
//
// A recipe also says how each of a Linear layer's three GEMMs adds its products (`accumulate`,
// format/accumulator.hpp): FP32 by default, or a tensor core's aligned accumulation; and, apart,
// how the attention's two forward products (q·kᵀ, probs·v) add theirs. It applies to a GEMM whose
// two operands are both quantized points (recipe/recipe.hpp).
//
// The recipe's types, in one place: RecipeSpec (one recipe as written), PhaseSpec and ScheduleSpec
// (a [quant] table's phases as written, recipe_table.hpp), and their resolved forms for the GPT:
// Recipe, Phase and Schedule (recipe.hpp).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/accumulator.hpp"
#include "quant/point_settings.hpp"

namespace altgrad::recipe {

// A preset that does not exist, or an override that selects no point.
class RecipeError : public quant::SettingsError {
 public:
  using quant::SettingsError::SettingsError;
};

// The three operands of a matmul Y = X·Wᵀ: X, W and dY.
enum class Role : std::uint8_t { act, weight, grad };
inline constexpr std::size_t kRoleCount = 3;
inline constexpr std::array<std::string_view, kRoleCount> kRoleNames = {"act", "weight", "grad"};

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

// The key of the attention products' model beside the Linear GEMMs' in `[quant.accumulate]` and in
// recipe.json's "accumulate". The one-name `accumulate = "<model>"` names the Linear GEMMs only.
inline constexpr std::string_view kAttentionAccumulateKey = "attention";

// The Hadamard transform element (recipe/hadamard_recipe.hpp has its grammar and checks).
enum class HadamardSigns : std::uint8_t { te, seeded, none };
inline constexpr std::array<std::string_view, 3> kHadamardSignsNames = {"te", "seeded", "none"};

// The Linear layers the element selects when its table names no `match`: the blocks' layers, not
// the LM head, whose points a recipe also leaves off unless it names them.
inline constexpr std::string_view kDefaultHadamardMatch = "h.*";

struct HadamardSpec {
  std::array<bool, kGemmCount> gemms{};  // by Gemm: whether its operands are transformed
  std::size_t size = 16;
  HadamardSigns signs = HadamardSigns::seeded;
  std::string match = std::string(kDefaultHadamardMatch);
  std::string origin = "recipe";  // "configs/x.toml:12", for messages

  // Whether any GEMM is transformed: a recipe without one has no Hadamard element.
  bool any() const;
  bool transforms(Gemm gemm) const { return gemms[static_cast<std::size_t>(gemm)]; }
  bool operator==(const HadamardSpec& o) const {
    return gemms == o.gemms && size == o.size && signs == o.signs && match == o.match;
  }
};

// Settings a role table or an override names; the others are left as they are.
struct SettingsPatch {
  std::optional<bool> enabled;
  std::optional<std::string> format;  // a format name (format/parse.hpp), checked when applied
  std::optional<format::Rounding> rounding;
  std::optional<quant::Scaling> scaling;
  std::optional<std::size_t> history;
  std::optional<quant::AmaxAlgorithm> amax;
  std::optional<int> margin;
  std::optional<std::size_t> block;
  std::optional<quant::MxScaleRule> scale_rule;
  std::optional<quant::BlockScaleFormat> scale_format;
  std::optional<int> sr_bits;
  std::optional<bool> tiles;  // the key `tile`

  // Throws quant::SettingsError (prefixed by `where`) on a bad format name, a value out of range, a
  // scale_rule named where the scale format has none, or sr_bits named where the rounding is not
  // stochastic. Naming a scale format without a rule resets the rule to floor, and naming another
  // rounding without sr_bits resets them to 32, and another scaling without `tile` resets it to
  // false, where those from a table below no longer apply. tile = true needs block scaling and a
  // block of at most 128 (a tile's side).
  void apply_to(quant::PointSettings& settings, std::string_view where) const;
};

struct Override {
  std::string match;  // glob over point names
  SettingsPatch patch;
  std::string origin;  // "configs/x.toml:12" or "preset fp8-hybrid", for messages
  // Where set, the patch applies only to the copy this GEMM reads of each matched Linear operand
  // (per-GEMM settings); the points' other GEMMs keep theirs.
  std::optional<Gemm> gemm;
};

struct RecipeSpec {
  std::string preset = "fp32";
  std::array<quant::PointSettings, kRoleCount> roles{};  // by Role
  std::vector<Override> overrides;
  GemmAccumulation accumulate{};                          // by Gemm; all FP32 by default
  std::array<std::string, kGemmCount> accumulate_origin;  // where each GEMM's model was set, for messages
  format::AccumulatorModel accumulate_attention{};        // q·kᵀ and probs·v; FP32 by default
  std::string accumulate_attention_origin;                 // where it was set, for messages
  HadamardSpec hadamard{};                                 // no GEMM transformed by default
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
  bool linear = true;  // a Linear layer's X, W or dY (the LM head's too); false: an attention operand
};

struct ResolvedPoint {
  std::string name;
  quant::PointSettings settings;  // every GEMM's copy but those named in by_gemm
  // By Gemm: the settings of the copy that GEMM reads, where an override with `gemm` made them
  // differ from `settings`; none elsewhere.
  std::array<std::optional<quant::PointSettings>, kGemmCount> by_gemm{};

  const quant::PointSettings& settings_for(Gemm gemm) const {
    const auto& own = by_gemm[static_cast<std::size_t>(gemm)];
    return own ? *own : settings;
  }
  bool differs_by_gemm() const {
    return std::any_of(by_gemm.begin(), by_gemm.end(), [](const auto& s) { return s.has_value(); });
  }
};

// Whether GEMM `gemm` reads operands of `role` (gemm_operands).
bool reads(Gemm gemm, Role role);

// Every point with its settings, in the order given. Throws RecipeError when an override matches
// no point, or, with `gemm`, no Linear operand that GEMM reads (the message names its origin and
// shows example point names), and where a per-GEMM copy would need delayed scaling, whose amax
// history is one per point.
std::vector<ResolvedPoint> resolve(const RecipeSpec& spec, std::span<const PointName> points);

// resolve()'s checks of resolved points, by the same index as `points`: tiles only on weights, a
// per-GEMM copy only for a GEMM that reads the operand and never under delayed scaling. Throws
// RecipeError naming the point and the copy.
void check_points(std::span<const ResolvedPoint> resolved, std::span<const PointName> points);

}  // namespace altgrad::recipe
