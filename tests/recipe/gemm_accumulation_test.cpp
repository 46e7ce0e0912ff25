// The recipe's GEMM accumulation (docs/quantization.md, "GEMM accumulation"): `accumulate` as one
// model, as hopper_te or as a table per GEMM, in [quant] and in phases; the attention products'
// model, named apart; which GEMMs it applies to; the block-scaling check; errors that name
// file:line, key and value; and recipe.json, which gains "accumulate" only when some GEMM is not
// FP32, and "attention" in it only when the attention products' model is not.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "config/config.hpp"
#include "recipe/recipe.hpp"
#include "format/accumulator.hpp"
#include "io/safetensors.hpp"
#include "model/matmul_points.hpp"
#include "recipe/recipe_spec.hpp"
#include "support/error_message.hpp"
#include "support/recipe_config.hpp"

namespace altgrad::format {
// GoogleTest prints a model by its name (found by argument-dependent lookup), not as bytes.
inline void PrintTo(const AccumulatorModel& model, std::ostream* out) { *out << accumulator_name(model); }
}  // namespace altgrad::format

namespace altgrad::recipe {
namespace {

using config::ConfigError;
using config::TrainConfig;
using config::gpt_config;
using config::parse_config;

using format::AccumulatorModel;
using test_support::config_with;
using test_support::mentions;
using test_support::message_of;

Recipe accumulate_recipe(const std::string& quant_toml) { return resolve_recipe(config_with(quant_toml)); }

// Every message starts with the file and line at fault (fuzz/config_fuzzer.cpp holds any config to that).
std::string accumulate_error(const std::string& quant_toml) {
  const std::string message = message_of<ConfigError>([&] { (void)resolve_schedule(config_with(quant_toml)); });
  EXPECT_TRUE(message.starts_with("test.toml:")) << message;
  return message;
}

const AccumulatorModel& gemm_of(const Recipe& recipe, Gemm gemm) {
  return recipe.accumulate[static_cast<std::size_t>(gemm)];
}

const AccumulatorModel kFp32{};
const AccumulatorModel kHopper = format::hopper_fp8(false);
const AccumulatorModel kHopperFast = format::hopper_fp8(true);

TEST(GemmAccumulation, Fp32UnlessARecipeSaysOtherwise) {
  for (const char* toml : {"", "[quant]\npreset = \"fp8-hybrid\"\n", "[quant]\npreset = \"mx8\"\n"}) {
    const Recipe r = accumulate_recipe(toml);
    for (const AccumulatorModel& m : r.accumulate) EXPECT_EQ(m, kFp32) << toml;
  }
}

TEST(GemmAccumulation, OneModelForAllThreeGemms) {
  const Recipe r = accumulate_recipe("[quant]\npreset = \"fp8-hybrid\"\naccumulate = \"hopper\"\n");
  for (const AccumulatorModel& m : r.accumulate) EXPECT_EQ(m, kHopper);
  const Recipe aligned = accumulate_recipe("[quant]\naccumulate = \"aligned,group=16,bits=20,promote=none\"\n");
  EXPECT_EQ(gemm_of(aligned, Gemm::wgrad).group, 16u);
  EXPECT_EQ(gemm_of(aligned, Gemm::wgrad).bits, 20);
  EXPECT_EQ(gemm_of(aligned, Gemm::forward), gemm_of(aligned, Gemm::dgrad));
}

// Transformer Engine: _2X_ACC_FPROP = False, _2X_ACC_DGRAD = _2X_ACC_WGRAD = True.
TEST(GemmAccumulation, HopperTeIsFastForwardAndPromotedBackward) {
  const Recipe r = accumulate_recipe("[quant]\npreset = \"fp8-hybrid\"\naccumulate = \"hopper_te\"\n");
  EXPECT_EQ(gemm_of(r, Gemm::forward), kHopperFast);
  EXPECT_EQ(gemm_of(r, Gemm::dgrad), kHopper);
  EXPECT_EQ(gemm_of(r, Gemm::wgrad), kHopper);
  EXPECT_EQ(gemm_of(r, Gemm::forward).promote, 0u);
  EXPECT_EQ(gemm_of(r, Gemm::dgrad).promote, 128u);
  EXPECT_EQ(r.accumulate, recipe::hopper_te());
}

TEST(GemmAccumulation, ATableNamesEachGemmAndTheOthersKeepTheirModel) {
  const Recipe r = accumulate_recipe(
      "[quant]\npreset = \"fp8-hybrid\"\n"
      "[quant.accumulate]\nforward = \"hopper_fast\"\nwgrad = \"aligned,group=32,bits=16,promote=128\"\n");
  EXPECT_EQ(gemm_of(r, Gemm::forward), kHopperFast);
  EXPECT_EQ(gemm_of(r, Gemm::dgrad), kFp32);
  AccumulatorModel wgrad = kHopper;
  wgrad.bits = 16;
  EXPECT_EQ(gemm_of(r, Gemm::wgrad), wgrad);
  // An inline table is the same table.
  const Recipe inline_table = accumulate_recipe("[quant]\naccumulate = { dgrad = \"hopper_bf16\" }\n");
  EXPECT_EQ(gemm_of(inline_table, Gemm::forward), kFp32);
  EXPECT_EQ(gemm_of(inline_table, Gemm::dgrad), format::hopper_bf16());
  EXPECT_EQ(gemm_of(inline_table, Gemm::wgrad), kFp32);
}

TEST(GemmAccumulation, Fp8HopperIsFp8HybridWithHopperTe) {
  const auto names = recipe::preset_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "fp8-hopper"), names.end());
  const Recipe hopper = accumulate_recipe("[quant]\npreset = \"fp8-hopper\"\n");
  const Recipe hybrid = accumulate_recipe("[quant]\npreset = \"fp8-hybrid\"\n");
  EXPECT_EQ(hopper.preset, "fp8-hopper");
  EXPECT_EQ(hopper.accumulate, recipe::hopper_te());
  ASSERT_EQ(hopper.points.size(), hybrid.points.size());
  for (std::size_t i = 0; i < hopper.points.size(); ++i) {
    EXPECT_EQ(hopper.points[i].settings, hybrid.points[i].settings) << hopper.points[i].name;
  }
  // A preset's accumulation is a starting point like its roles.
  const Recipe patched =
      accumulate_recipe("[quant]\npreset = \"fp8-hopper\"\n[quant.accumulate]\nforward = \"fp32\"\n");
  EXPECT_EQ(gemm_of(patched, Gemm::forward), kFp32);
  EXPECT_EQ(gemm_of(patched, Gemm::wgrad), kHopper);
}

TEST(GemmAccumulation, PhasesPatchWhatTheyNameOrStartFromTheirPreset) {
  const Schedule s = resolve_schedule(
      config_with("[quant]\npreset = \"fp8-hybrid\"\naccumulate = \"hopper\"\n"
                        "[[quant.phase]]\nstart = 10\n[quant.phase.accumulate]\ndgrad = \"hopper_bf16\"\n"
                        "[[quant.phase]]\nstart = 20\n[quant.phase.act]\nformat = \"e3m4\"\n"
                        "[[quant.phase]]\nstart = 30\npreset = \"fp8-hybrid\"\n"
                        "[[quant.phase]]\nstart = 40\npreset = \"fp8-hopper\"\n"
                        "[[quant.phase]]\nstart = 50\npreset = \"fp8-hybrid\"\naccumulate = \"hopper_fast\"\n"));
  ASSERT_EQ(s.phases.size(), 6u);
  const auto at = [&](std::size_t phase, Gemm gemm) { return gemm_of(s.phases[phase].recipe, gemm); };
  EXPECT_EQ(at(1, Gemm::forward), kHopper);  // patched: the GEMMs it does not name keep phase 0's
  EXPECT_EQ(at(1, Gemm::dgrad), format::hopper_bf16());
  EXPECT_EQ(at(1, Gemm::wgrad), kHopper);
  EXPECT_EQ(s.phases[2].recipe.accumulate, s.phases[1].recipe.accumulate);  // a phase without accumulate
  for (const Gemm gemm : {Gemm::forward, Gemm::dgrad, Gemm::wgrad}) EXPECT_EQ(at(3, gemm), kFp32);  // a fresh preset
  EXPECT_EQ(s.phases[4].recipe.accumulate, recipe::hopper_te());
  for (const Gemm gemm : {Gemm::forward, Gemm::dgrad, Gemm::wgrad}) EXPECT_EQ(at(5, gemm), kHopperFast);
}

TEST(GemmAccumulation, AppliesToLinearGemmsWhoseTwoOperandsAreQuantized) {
  const TrainConfig c = config_with(
      "[quant]\npreset = \"fp8-hopper\"\n[[quant.override]]\nmatch = \"h.1.mlp.c_fc:grad\"\nenabled = false\n");
  const Recipe r = resolve_recipe(c);
  const model::MatmulPoints points(gpt_config(c));
  const std::size_t c_attn = points.block(0, model::BlockMatmul::attn_c_attn).index;
  EXPECT_EQ(r.accumulation(c_attn, Gemm::forward), kHopperFast);
  EXPECT_EQ(r.accumulation(c_attn, Gemm::dgrad), kHopper);
  EXPECT_EQ(r.accumulation(c_attn, Gemm::wgrad), kHopper);
  // dY unquantized: the two backward GEMMs stay FP32, the forward GEMM reads X and W only.
  const std::size_t c_fc = points.block(1, model::BlockMatmul::mlp_c_fc).index;
  EXPECT_EQ(r.accumulation(c_fc, Gemm::forward), kHopperFast);
  EXPECT_EQ(r.accumulation(c_fc, Gemm::dgrad), kFp32);
  EXPECT_EQ(r.accumulation(c_fc, Gemm::wgrad), kFp32);
  // The LM head stays in higher precision, as in Transformer Engine; switched on, it accumulates.
  for (const Gemm gemm : {Gemm::forward, Gemm::dgrad, Gemm::wgrad}) {
    EXPECT_EQ(r.accumulation(points.lm_head().index, gemm), kFp32);
  }
  const Recipe head =
      accumulate_recipe("[quant]\npreset = \"fp8-hopper\"\n[[quant.override]]\nmatch = \"lm_head:*\"\n");
  EXPECT_EQ(head.accumulation(points.lm_head().index, Gemm::wgrad), kHopper);
}

TEST(GemmAccumulation, ReadsTheOperandsEachGemmReads) {
  using recipe::Role;
  EXPECT_EQ(recipe::gemm_operands(Gemm::forward), (std::array<Role, 2>{Role::act, Role::weight}));
  EXPECT_EQ(recipe::gemm_operands(Gemm::dgrad), (std::array<Role, 2>{Role::grad, Role::weight}));
  EXPECT_EQ(recipe::gemm_operands(Gemm::wgrad), (std::array<Role, 2>{Role::grad, Role::act}));
  // Only X quantized: no GEMM has both operands quantized.
  const TrainConfig c = config_with("[quant]\naccumulate = \"hopper\"\n[quant.act]\nformat = \"e4m3\"\n");
  const Recipe r = resolve_recipe(c);
  const model::MatmulPoints points(gpt_config(c));
  for (const model::MatmulPoint& matmul : points.all()) {
    for (const Gemm gemm : {Gemm::forward, Gemm::dgrad, Gemm::wgrad})
      EXPECT_EQ(r.accumulation(matmul.index, gemm), kFp32);
  }
  // X and dY: wgrad only.
  const Recipe wgrad_only = accumulate_recipe(
      "[quant]\naccumulate = \"hopper\"\n[quant.act]\nformat = \"e4m3\"\n[quant.grad]\nformat = \"e5m2\"\n");
  EXPECT_EQ(wgrad_only.accumulation(0, Gemm::forward), kFp32);
  EXPECT_EQ(wgrad_only.accumulation(0, Gemm::dgrad), kFp32);
  EXPECT_EQ(wgrad_only.accumulation(0, Gemm::wgrad), kHopper);
}

TEST(GemmAccumulation, ErrorsNameFileLineKeyAndValue) {
  // The accumulator's own message lists the valid forms; the whole-recipe form adds hopper_te.
  EXPECT_TRUE(mentions(accumulate_error("[quant]\naccumulate = \"hoper\"\n"),
                       {"test.toml:6", "accumulate", "hoper", "hopper_bf16", "aligned", "hopper_te"}));
  EXPECT_TRUE(mentions(accumulate_error("[quant]\naccumulate = \"aligned,group=0\"\n"),
                       {"test.toml:6", "group", "\"0\"", "[1, 256]"}));
  EXPECT_TRUE(mentions(accumulate_error("[quant.accumulate]\nforward = \"hopper\"\nwgrad = \"aligned,cut=up\"\n"),
                       {"test.toml:7", "accumulate.wgrad", "cut", "up", "nearest"}));
  EXPECT_TRUE(mentions(accumulate_error("[quant.accumulate]\nfwd = \"hopper\"\n"),
                       {"test.toml:6", "accumulate.fwd", "forward, dgrad, wgrad"}));
  EXPECT_TRUE(
      mentions(accumulate_error("[quant.accumulate]\ndgard = \"hopper\"\n"), {"did you mean 'accumulate.dgrad'"}));
  EXPECT_TRUE(mentions(accumulate_error("[quant.accumulate]\ndgrad = \"hopper_te\"\n"),
                       {"test.toml:6", "accumulate.dgrad", "hopper_te", "all three GEMMs"}));
  EXPECT_TRUE(mentions(accumulate_error("[quant]\naccumulate = 13\n"), {"test.toml:6", "accumulate", "13", "forward"}));
  EXPECT_TRUE(
      mentions(accumulate_error("[quant.accumulate]\nwgrad = true\n"), {"test.toml:6", "accumulate.wgrad", "true"}));
  EXPECT_TRUE(mentions(accumulate_error("[quant]\n[[quant.phase]]\nstart = 5\naccumulate = \"hopper_slow\"\n"),
                       {"test.toml:8", "accumulate", "hopper_slow"}));
  EXPECT_TRUE(mentions(accumulate_error("[quant]\nacumulate = \"hopper\"\n"), {"did you mean 'accumulate'"}));
}

// The FP8 tensor core takes one scale per tensor: MX blocks need the BF16 path.
TEST(GemmAccumulation, BlockScalingNeedsBf16Inputs) {
  EXPECT_TRUE(mentions(
      accumulate_error("[quant]\npreset = \"mx8\"\naccumulate = \"hopper\"\n"),
      {"test.toml:7", "accumulate.forward", "h.0.attn.c_attn:act", "block scaling", "inputs=bf16", "hopper_bf16"}));
  // Named by the GEMM that reads the block-scaled point: here dY, which forward does not read.
  EXPECT_TRUE(mentions(accumulate_error("[quant]\npreset = \"fp8-hopper\"\n[quant.grad]\nscaling = \"block\"\n"),
                       {"test.toml:6", "accumulate.dgrad", "h.0.attn.c_attn:grad"}));
  EXPECT_TRUE(mentions(accumulate_error("[quant]\npreset = \"mx8\"\n[quant.accumulate]\nforward = \"hopper_bf16\"\n"
                                        "wgrad = \"aligned,promote=128\"\n"),
                       {"test.toml:9", "accumulate.wgrad", "h.0.attn.c_attn:grad"}));
  EXPECT_TRUE(
      mentions(accumulate_error("[quant]\npreset = \"fp8-hybrid\"\n[[quant.phase]]\nstart = 9\npreset = \"mx8\"\n"
                                "accumulate = \"hopper_fast\"\n"),
               {"test.toml:10", "accumulate.forward"}));
  // Accepted: the BF16 path, a GEMM whose block-scaled operand is not quantized, and FP32 GEMMs.
  EXPECT_NO_THROW(accumulate_recipe("[quant]\npreset = \"mx8\"\naccumulate = \"hopper_bf16\"\n"));
  EXPECT_NO_THROW(accumulate_recipe("[quant]\npreset = \"mx8\"\naccumulate = \"aligned,inputs=bf16\"\n"));
  EXPECT_NO_THROW(
      accumulate_recipe("[quant]\npreset = \"mx8\"\n[quant.accumulate]\nforward = \"hopper\"\n"
                        "[[quant.override]]\nmatch = \"*:act\"\nenabled = false\n"));
  EXPECT_NO_THROW(accumulate_recipe("[quant]\npreset = \"mx8\"\naccumulate = \"fp32\"\n"));
}

TEST(GemmAccumulation, JsonRoundTripKeepsEveryGemmsModel) {
  const TrainConfig c = config_with(
      "[quant]\npreset = \"fp8-hybrid\"\n[quant.accumulate]\nforward = \"hopper_fast\"\n"
      "dgrad = \"aligned,group=16,bits=20,acc=18,cut=nearest,promote=64,split=2\"\nwgrad = \"hopper_bf16\"\n");
  const Recipe r = resolve_recipe(c);
  const nlohmann::json json = recipe_to_json(r);
  ASSERT_TRUE(json.contains("accumulate"));
  EXPECT_EQ(json.at("accumulate").at("forward"), "hopper_fast");
  EXPECT_EQ(json.at("accumulate").at("dgrad"),
            "aligned,group=16,bits=20,acc=18,cut=nearest,promote=64,split=2,inputs=format");
  EXPECT_EQ(json.at("accumulate").at("wgrad"), "hopper_bf16");
  const model::MatmulPoints points(gpt_config(c));
  const Recipe back = recipe_from_json(json, points, "recipe.json");
  EXPECT_EQ(back.accumulate, r.accumulate);
  EXPECT_EQ(recipe_to_json(back), json);
  // A schedule's phases each carry their own.
  const Schedule s = resolve_schedule(
      config_with("[quant]\npreset = \"fp8-hybrid\"\n[[quant.phase]]\nstart = 10\naccumulate = \"hopper_te\"\n"));
  const nlohmann::json phases = schedule_to_json(s);
  EXPECT_FALSE(phases.at("phases").at(0).at("recipe").contains("accumulate"));
  EXPECT_EQ(phases.at("phases").at(1).at("recipe").at("accumulate").at("forward"), "hopper_fast");
}

// Every recipe.json written before accumulation existed, and the golden runs', stays byte for byte.
TEST(GemmAccumulation, Fp32RecipesWriteNoAccumulateKey) {
  for (const char* toml :
       {"", "[quant]\npreset = \"fp8-hybrid\"\n", "[quant]\npreset = \"bf16\"\naccumulate = \"fp32\"\n",
        "[quant]\npreset = \"mx8\"\n[quant.accumulate]\nwgrad = \"fp32\"\n"}) {
    const TrainConfig c = config_with(toml);
    const nlohmann::json json = recipe_to_json(resolve_recipe(c));
    EXPECT_EQ(json.size(), 3u) << json.dump();
    EXPECT_FALSE(json.contains("accumulate")) << toml;
    const Recipe back = recipe_from_json(json, model::MatmulPoints(gpt_config(c)), "recipe.json");
    for (const AccumulatorModel& m : back.accumulate) EXPECT_EQ(m, kFp32);
  }
}

TEST(GemmAccumulation, BadJsonNamesTheSource) {
  const TrainConfig c = config_with("[quant]\npreset = \"fp8-hopper\"\n");
  const model::MatmulPoints points(gpt_config(c));
  const nlohmann::json good = recipe_to_json(resolve_recipe(c));
  const auto error = [&](const auto& edit) {
    nlohmann::json broken = good;
    edit(broken);
    return message_of<io::CheckpointError>([&] { (void)recipe_from_json(broken, points, "ck/recipe.json"); });
  };
  EXPECT_TRUE(mentions(error([](nlohmann::json& j) { j["accumulate"]["dgrad"] = "sideways"; }),
                       {"ck/recipe.json", "sideways"}));
  EXPECT_TRUE(
      mentions(error([](nlohmann::json& j) { j["accumulate"]["fprop"] = "hopper"; }), {"ck/recipe.json", "fprop"}));
  EXPECT_TRUE(mentions(error([](nlohmann::json& j) { j["accumulate"].erase("wgrad"); }), {"ck/recipe.json", "wgrad"}));
  EXPECT_TRUE(mentions(error([](nlohmann::json& j) { j["accumulate"] = "hopper"; }), {"ck/recipe.json", "accumulate"}));
  EXPECT_TRUE(mentions(error([](nlohmann::json& j) { j["accumulate"]["forward"] = 3; }), {"ck/recipe.json"}));
  // A hand-edited file is held to the block-scaling rule too.
  EXPECT_TRUE(mentions(error([](nlohmann::json& j) {
                         for (auto& point : j["points"]) point["scaling"] = "block";
                       }),
                       {"ck/recipe.json", "accumulate.forward", "block scaling"}));
}

// The attention products' model is named by [quant.accumulate]'s `attention` alone: the one-name
// form keeps meaning the three Linear GEMMs, so the recipes written before it mean what they meant.
TEST(GemmAccumulation, TheAttentionProductsAreNamedApart) {
  for (const char* toml : {"", "[quant]\npreset = \"fp8-hopper\"\n", "[quant]\naccumulate = \"hopper\"\n"}) {
    EXPECT_EQ(accumulate_recipe(toml).accumulate_attention, kFp32) << toml;
  }
  const Recipe r = accumulate_recipe("[quant.accumulate]\nattention = \"hopper\"\n");
  EXPECT_EQ(r.accumulate_attention, kHopper);
  for (const AccumulatorModel& m : r.accumulate) EXPECT_EQ(m, kFp32);
  const Recipe both =
      accumulate_recipe("[quant]\naccumulate = { wgrad = \"hopper_fast\", attention = \"hopper_bf16\" }\n");
  EXPECT_EQ(both.accumulate_attention, format::hopper_bf16());
  EXPECT_EQ(gemm_of(both, Gemm::wgrad), kHopperFast);
  EXPECT_EQ(gemm_of(both, Gemm::forward), kFp32);
}

// A phase without a preset keeps the previous phase's attention model, whatever its one-name
// `accumulate` says; a phase with a preset starts from the preset's (FP32).
TEST(GemmAccumulation, PhasesKeepOrReplaceTheAttentionModel) {
  const Schedule s = resolve_schedule(
      config_with("[quant]\npreset = \"fp8-hybrid\"\n[quant.accumulate]\nattention = \"hopper\"\n"
                        "[[quant.phase]]\nstart = 10\naccumulate = \"hopper_te\"\n"
                        "[[quant.phase]]\nstart = 20\n[quant.phase.accumulate]\nattention = \"hopper_fast\"\n"
                        "[[quant.phase]]\nstart = 30\npreset = \"fp8-hybrid\"\n"));
  ASSERT_EQ(s.phases.size(), 4u);
  EXPECT_EQ(s.phases[0].recipe.accumulate_attention, kHopper);
  EXPECT_EQ(s.phases[1].recipe.accumulate_attention, kHopper);
  EXPECT_EQ(s.phases[1].recipe.accumulate, recipe::hopper_te());
  EXPECT_EQ(s.phases[2].recipe.accumulate_attention, kHopperFast);
  EXPECT_EQ(s.phases[2].recipe.accumulate, recipe::hopper_te());
  EXPECT_EQ(s.phases[3].recipe.accumulate_attention, kFp32);
}

// q·kᵀ reads h.{i}.attn.q and .k, probs·v reads .probs and .v: each takes the model where both of
// its points are quantized. The attention points are off in every preset.
TEST(GemmAccumulation, AttentionAppliesToAProductWhoseTwoPointsAreQuantized) {
  using model::AttentionGemm;
  const std::string attention = "[quant]\npreset = \"fp8-hybrid\"\n[quant.accumulate]\nattention = \"hopper\"\n";
  const TrainConfig c = config_with(attention + "[[quant.override]]\nmatch = \"h.0.attn.*\"\n"
                                                      "[[quant.override]]\nmatch = \"h.1.attn.[qkv]\"\n");
  const model::MatmulPoints points(gpt_config(c));
  const Recipe r = resolve_recipe(c);
  EXPECT_EQ(r.attention_accumulation(points, 0, AttentionGemm::scores), kHopper);
  EXPECT_EQ(r.attention_accumulation(points, 0, AttentionGemm::values), kHopper);
  EXPECT_EQ(r.attention_accumulation(points, 1, AttentionGemm::scores), kHopper);
  EXPECT_EQ(r.attention_accumulation(points, 1, AttentionGemm::values), kFp32);  // probs unquantized
  const Recipe off = accumulate_recipe(attention);
  for (const AttentionGemm gemm : {AttentionGemm::scores, AttentionGemm::values}) {
    EXPECT_EQ(off.attention_accumulation(points, 0, gemm), kFp32);
  }
  EXPECT_EQ(model::attention_gemm_operands(AttentionGemm::scores),
            (std::array<model::Operand, 2>{model::Operand::q, model::Operand::k}));
  EXPECT_EQ(model::attention_gemm_operands(AttentionGemm::values),
            (std::array<model::Operand, 2>{model::Operand::probs, model::Operand::v}));
}

TEST(GemmAccumulation, AttentionErrorsNameFileLineKeyAndValue) {
  EXPECT_TRUE(mentions(accumulate_error("[quant.accumulate]\nattention = \"hoper\"\n"),
                       {"test.toml:6", "accumulate.attention", "hoper", "hopper_bf16", "aligned"}));
  EXPECT_TRUE(mentions(accumulate_error("[quant.accumulate]\nattention = \"hopper_te\"\n"),
                       {"test.toml:6", "accumulate.attention", "hopper_te"}));
  EXPECT_TRUE(
      mentions(accumulate_error("[quant.accumulate]\nattention = 7\n"), {"test.toml:6", "accumulate.attention", "7"}));
  EXPECT_TRUE(mentions(accumulate_error("[quant.accumulate]\natention = \"hopper\"\n"),
                       {"test.toml:6", "did you mean 'accumulate.attention'", "forward, dgrad, wgrad, attention"}));
  EXPECT_TRUE(mentions(accumulate_error("[quant]\n[[quant.phase]]\nstart = 5\n[quant.phase.accumulate]\n"
                                        "attention = \"aligned,bits=99\"\n"),
                       {"test.toml:9", "accumulate.attention", "bits", "99"}));
  // The FP8 tensor core takes one scale per tensor: attention points under MX blocks need BF16 inputs.
  const std::string mx = "[quant]\npreset = \"mx8\"\n[[quant.override]]\nmatch = \"h.*.attn.*\"\n";
  EXPECT_TRUE(mentions(accumulate_error(mx + "[quant.accumulate]\nattention = \"hopper\"\n"),
                       {"test.toml:10", "accumulate.attention", "h.0.attn.q", "block scaling", "hopper_bf16"}));
  EXPECT_NO_THROW(accumulate_recipe(mx + "[quant.accumulate]\nattention = \"hopper_bf16\"\n"));
}

TEST(GemmAccumulation, JsonGainsAttentionOnlyWhereItIsNotFp32) {
  const TrainConfig c = config_with(
      "[quant]\npreset = \"fp8-hybrid\"\n[quant.accumulate]\nattention = \"hopper\"\n"
      "[[quant.override]]\nmatch = \"h.*.attn.*\"\n");
  const model::MatmulPoints points(gpt_config(c));
  const nlohmann::json json = recipe_to_json(resolve_recipe(c));
  EXPECT_EQ(json.at("accumulate"),
            (nlohmann::json{{"forward", "fp32"}, {"dgrad", "fp32"}, {"wgrad", "fp32"}, {"attention", "hopper"}}));
  const Recipe back = recipe_from_json(json, points, "recipe.json");
  EXPECT_EQ(back.accumulate_attention, kHopper);
  EXPECT_EQ(recipe_to_json(back), json);
  // An FP32 attention model writes no key: files written before it existed read back as they were.
  for (const char* toml : {"[quant]\npreset = \"fp8-hopper\"\n",
                           "[quant]\npreset = \"fp8-hopper\"\n[quant.accumulate]\nattention = \"fp32\"\n"}) {
    const nlohmann::json linear = recipe_to_json(accumulate_recipe(toml));
    EXPECT_EQ(linear.at("accumulate").size(), 3u) << toml;
    EXPECT_EQ(recipe_from_json(linear, points, "recipe.json").accumulate_attention, kFp32) << toml;
  }
  const auto error = [&](const auto& edit) {
    nlohmann::json broken = json;
    edit(broken);
    return message_of<io::CheckpointError>([&] { (void)recipe_from_json(broken, points, "ck/recipe.json"); });
  };
  EXPECT_TRUE(mentions(error([](nlohmann::json& j) { j["accumulate"]["attention"] = "sideways"; }),
                       {"ck/recipe.json", "sideways"}));
  EXPECT_TRUE(mentions(error([](nlohmann::json& j) { j["accumulate"]["atention"] = "hopper"; }),
                       {"ck/recipe.json", "atention", "attention"}));
  EXPECT_TRUE(mentions(error([](nlohmann::json& j) {
                         for (auto& point : j["points"]) point["scaling"] = "block";
                       }),
                       {"ck/recipe.json", "accumulate.attention", "block scaling"}));
}

}  // namespace
}  // namespace altgrad::recipe
