// Domain separation of a run's random streams. Every word a run draws comes from Philox4x32-10 at
// (key, counter) with key = philox_key(seed, purpose); format/philox_key_test.cpp proves the keys
// of distinct purposes differ for every seed, so two purposes can share no (key, counter) pair
// whatever their counters. Here: each consumer really draws under its purpose's key (the words are
// recomputed from the documented layouts), the three words that used to coincide — wte's first
// value, step 0's first batch offset, point 0's first rounding word — now differ, and the counter
// layouts stay inside the ranges that make them injective within a purpose.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "data/byte_dataset.hpp"
#include "format/codec.hpp"
#include "format/parse.hpp"
#include "format/philox.hpp"
#include "format/philox_key.hpp"
#include "model/gpt.hpp"
#include "model/init.hpp"
#include "quant/point_quantizer.hpp"
#include "recipe/recipe_spec.hpp"
#include "support/one_block_model.hpp"

namespace altgrad::train {
namespace {

using format::PhiloxCounter;
using format::RandomPurpose;

constexpr std::uint64_t kSeed = 1337;

std::size_t tensor_index(const model::ParameterLayout& layout, const std::string& name) {
  const auto tensors = layout.tensors();
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    if (tensors[k].name == name) return k;
  }
  ADD_FAILURE() << name << " not in the layout";
  return 0;
}

// Initialization: element i of tensor k is 0.02 · Box–Muller(block (i, k) under the init key).
PhiloxCounter init_words_of_wte(std::size_t k) {
  return format::philox_block(format::philox_key(kSeed, RandomPurpose::initialization), k, 0);
}

TEST(RandomStreams, InitializationDrawsUnderItsOwnKey) {
  model::Gpt<double> gpt(test_support::one_block_model(2, 16, 8));
  gpt.initialize(kSeed);
  const std::size_t k = tensor_index(gpt.layout(), "transformer.wte.weight");
  const PhiloxCounter w = init_words_of_wte(k);
  const double u1 = 1.0 - static_cast<double>((std::uint64_t{w[0]} << 21) ^ (w[1] >> 11)) * 0x1p-53;
  const double u2 = static_cast<double>((std::uint64_t{w[2]} << 21) ^ (w[3] >> 11)) * 0x1p-53;
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.141592653589793 * u2);
  EXPECT_NEAR(gpt.parameter("transformer.wte.weight")[0], model::kInitStd * z, 1e-15);
}

// Batch sampling: row 0 of training step 0 starts at (words 0,1 of block (0, stream 0)) mod windows.
PhiloxCounter batch_words_of_step0() {
  return format::philox_block(format::philox_key(kSeed, RandomPurpose::batch_sampling), 0, 0);
}

TEST(RandomStreams, BatchSamplingDrawsUnderItsOwnKey) {
  std::mt19937 generator(3);
  std::string bytes(5000, '\0');
  for (auto& b : bytes) b = static_cast<char>(generator() & 0xFF);
  const data::ByteDataset data(bytes, data::DatasetOptions{0.1, 16, kSeed, "test corpus"});
  constexpr int T = 16;
  std::vector<std::int32_t> x(T), y(T);
  data.get_batch(data::BatchKey::training(0), 1, T, x, y);
  const auto text = data.split(data::Split::train);
  const PhiloxCounter w = batch_words_of_step0();
  const std::size_t offset = (w[0] | (std::uint64_t{w[1]} << 32)) % (text.size() - T);
  for (int t = 0; t < T; ++t) ASSERT_EQ(x[static_cast<std::size_t>(t)], text[offset + static_cast<std::size_t>(t)]) << t;
}

// Stochastic rounding: element i of point 0's first call in step 0 reads word i of stream 0.
PhiloxCounter rounding_words_of_point0() {
  return format::philox_block(format::philox_key(kSeed, RandomPurpose::stochastic_rounding), 0, 0);
}

quant::PointSettings stochastic_e4m3() {
  quant::PointSettings s;
  recipe::SettingsPatch patch;
  patch.format = "e4m3";
  patch.scaling = quant::Scaling::none;
  patch.rounding = format::Rounding::stochastic;
  patch.apply_to(s, "test");
  return s;
}

TEST(RandomStreams, StochasticRoundingDrawsUnderItsOwnKey) {
  quant::PointQuantizer point(stochastic_e4m3(), kSeed, 0);
  point.begin_step(0);
  const std::vector<float> in = {0.30f, -1.7f, 3.1f, 0.013f};
  std::vector<float> out(in.size());
  point.apply(in, out, in.size());
  const format::Format f = format::make_format(format::parse_format("e4m3"));
  const PhiloxCounter w = rounding_words_of_point0();
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i], format::decode(f, format::encode(f, format::Rounding::stochastic, in[i], w[i]))) << i;
  }
}

// The three purposes' first words: pairwise different, and none is the bare-seed block
// philox_block(seed, 0, 0) that all three used to read.
TEST(RandomStreams, FirstWordsOfInitBatchAndRoundingDiffer) {
  const model::ParameterLayout layout(test_support::one_block_model(2, 16, 8));
  const PhiloxCounter init = init_words_of_wte(tensor_index(layout, "transformer.wte.weight"));
  const PhiloxCounter batch = batch_words_of_step0(), rounding = rounding_words_of_point0();
  const PhiloxCounter shared_before = format::philox_block(kSeed, 0, 0);
  EXPECT_NE(init, batch);
  EXPECT_NE(init, rounding);
  EXPECT_NE(batch, rounding);
  for (const PhiloxCounter& words : {init, batch, rounding}) EXPECT_NE(words, shared_before);
}

// Within stochastic rounding, stream = step·2^20 + point must stay below the frozen-stream bit
// 2^63: the quantizer refuses steps from 2^43 on, so no training stream reaches an evaluation one.
TEST(RandomStreams, RoundingStreamsOfTrainingStayBelowTheFrozenBit) {
  quant::PointQuantizer point(stochastic_e4m3(), kSeed, quant::PointQuantizer::kMaxPoints - 1);
  const std::int64_t last = quant::PointQuantizer::kMaxSteps - 1;
  EXPECT_NO_THROW(point.begin_step(last));
  EXPECT_LT(static_cast<std::uint64_t>(last) * quant::PointQuantizer::kMaxPoints + quant::PointQuantizer::kMaxPoints - 1,
            std::uint64_t{1} << 63);
  EXPECT_THROW(point.begin_step(last + 1), quant::SettingsError);
  EXPECT_THROW(point.begin_step(-1), quant::SettingsError);
}

}  // namespace
}  // namespace altgrad::train
