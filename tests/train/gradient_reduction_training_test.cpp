// The low-precision gradient reduction in whole runs (grad_reduce_format; docs/optimizers.md,
// "Low-precision gradient reduction"): off, a run is the run without the keys; on, the optimizer
// sees the reduction of the micro-batches' own gradients, the run resumes and runs on one or two
// threads bit for bit, and a device run's replica gives the CPU run's bits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.hpp"
#include "data/byte_dataset.hpp"
#include "format/parse.hpp"
#include "model/activations.hpp"
#include "model/gpt.hpp"
#include "model/guarded_backend.hpp"
#include "support/scratch_dir.hpp"
#include "train/gradient_reduction.hpp"
#include "train/guarded_quantizer.hpp"
#include "train/resume_check.hpp"
#include "train/same_run_check.hpp"
#include "train/thread_count_check.hpp"
#include "train/training_data.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

// Six steps of two micro-batches, checkpoints at 4 and 6, full diagnostics at step 5.
config::TrainConfig reduction_config(const fs::path& corpus, const std::string& format,
                                     config::GradReduceSum sum = config::GradReduceSum::in_format) {
  config::TrainConfig c = tiny_config(corpus);
  c.max_iters = 6;
  c.diag_interval = 5;
  c.gradient_accumulation_steps = 2;
  c.grad_reduce_format = format;
  c.grad_reduce_sum = sum;
  return c;
}

// Off: a config that writes both keys at their defaults is the run without them, and logs no
// grad_reduce. (tests/cli/golden_runs.json holds the bits of runs recorded before the keys existed.)
TEST(GradientReductionTraining, OffIsTheRunWithoutTheKeys) {
  test_support::ScratchDir dir;
  const config::TrainConfig plain = reduction_config(dir.write("corpus.txt", generated_corpus()), "");
  const std::string text = config::config_to_toml(plain);
  ASSERT_NE(text.find("\ngrad_reduce_format = \"\""), std::string::npos);
  ASSERT_NE(text.find("\ngrad_reduce_sum = \"format\""), std::string::npos);
  const config::TrainConfig written = config::parse_config(text, "off.toml");
  ASSERT_EQ(written, plain);
  ASSERT_EQ(run(plain, dir.path() / "plain").stop_reason, "completed");
  ASSERT_EQ(run(written, dir.path() / "written").stop_reason, "completed");
  expect_same_run(dir.path() / "plain", dir.path() / "written");
  for (const nlohmann::json& line : json_lines(dir.path() / "plain" / "metrics.jsonl")) {
    EXPECT_FALSE(line.contains("grad_reduce")) << line.dump();
  }
}

// One SGD step at lr = 1 without decay or clipping moves each weight by −ĝ exactly: ĝ computed
// here from the two micro-batches' own gradients (each from zeroed gradients) and the reducer,
// against the run's checkpoint; and far from the FP32 average, so that the check can tell.
TEST(GradientReductionTraining, TheOptimizerSeesTheReductionOfEachMicroBatchsGradient) {
  test_support::ScratchDir dir;
  for (const int M : {1, 3}) {
    SCOPED_TRACE("M = " + std::to_string(M));
    config::TrainConfig c = reduction_config(dir.write("corpus.txt", generated_corpus()), "e4m3");
    c.gradient_accumulation_steps = M;
    c.optimizer = config::OptimizerKind::sgd;
    c.momentum = 0.0;
    c.weight_decay = 0.0;
    c.grad_clip = 0.0;
    c.learning_rate = 1.0;
    c.min_lr = 0.0;
    c.warmup_iters = 0;
    c.max_iters = 1;
    const fs::path run_dir = dir.path() / ("sgd" + std::to_string(M));
    const TrainOutcome outcome = run(c, run_dir);
    ASSERT_EQ(outcome.stop_reason, "completed");
    const std::vector<float> after = final_parameters(outcome.last_checkpoint);

    model::Gpt<float> gpt(config::gpt_config(c));
    gpt.initialize(c.seed);
    const std::vector<float> before(gpt.parameters().begin(), gpt.parameters().end());
    data::ByteDataset data = load_training_data(c, dir.path());
    model::Activations<float> acts(gpt.config(), static_cast<std::size_t>(c.batch_size),
                                   static_cast<std::size_t>(c.block_size));
    std::vector<std::int32_t> x(static_cast<std::size_t>(c.batch_size * c.block_size)), y(x.size());
    std::optional<GradientReduction> reducer = make_gradient_reduction(c, gpt.layout());
    ASSERT_TRUE(reducer);
    std::vector<double> fp32_sum(before.size(), 0.0);
    for (int m = 0; m < M; ++m) {
      gpt.zero_gradients();
      data.get_batch(data::BatchKey::training(0, static_cast<std::uint32_t>(m)), c.batch_size, c.block_size, x, y);
      model::gpt_forward(gpt, acts, x, y);
      model::gpt_backward(gpt, acts);
      std::copy(gpt.gradients().begin(), gpt.gradients().end(), reducer->micro_batch(m).begin());
      for (std::size_t i = 0; i < before.size(); ++i) fp32_sum[i] += gpt.gradients()[i];
    }
    std::vector<float> reduced(before.size());
    reducer->reduce(reduced);
    std::size_t far_from_fp32 = 0;
    for (std::size_t i = 0; i < before.size(); ++i) {
      ASSERT_EQ(after[i], before[i] - reduced[i]) << "element " << i;
      const double fp32_mean = fp32_sum[i] / M;
      if (std::fabs(fp32_mean - reduced[i]) > 1e-3 * std::fabs(fp32_mean)) ++far_from_fp32;
    }
    EXPECT_GT(far_from_fp32, before.size() / 4);
  }
}

TEST(GradientReductionTraining, RunsDifferFromFp32AndBySumAndLogTheRoundings) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  ASSERT_EQ(run(reduction_config(corpus, ""), dir.path() / "fp32").stop_reason, "completed");
  ASSERT_EQ(run(reduction_config(corpus, "e4m3"), dir.path() / "format").stop_reason, "completed");
  ASSERT_EQ(run(reduction_config(corpus, "e4m3", config::GradReduceSum::fp32), dir.path() / "sum32").stop_reason,
            "completed");
  const auto weights = [&](const char* name) {
    return bytes_of(dir.path() / name / "checkpoints" / "step_6" / "model.safetensors");
  };
  EXPECT_NE(weights("format"), weights("fp32"));
  EXPECT_NE(weights("format"), weights("sum32"));
  const std::vector<double> fp32 = logged_losses(dir.path() / "fp32"), e4m3 = logged_losses(dir.path() / "format");
  ASSERT_EQ(e4m3.size(), 6u);
  EXPECT_EQ(e4m3.front(), fp32.front());  // the same first forward pass
  EXPECT_LT(e4m3.back(), e4m3.front());   // and it learns
  for (const nlohmann::json& line : json_lines(dir.path() / "format" / "metrics.jsonl")) {
    const nlohmann::json& reduce = line.at("grad_reduce");
    EXPECT_GE(reduce.at("overflow_pct").get<double>(), 0.0);
    EXPECT_GT(reduce.at("underflow_pct").get<double>(), 0.0);  // the small entries of a tensor with outliers
    EXPECT_LT(reduce.at("underflow_pct").get<double>(), 50.0);
  }
}

// Eight steps, split at the evaluation and checkpoint of step 4.
TEST(GradientReductionTraining, ResumesBitForBit) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  config::TrainConfig two = reduction_config(corpus, "e4m3");
  two.max_iters = 8;
  expect_bit_identical_resume(two, dir.path() / "m2");
  config::TrainConfig one = reduction_config(corpus, "e5m2", config::GradReduceSum::fp32);
  one.max_iters = 8;
  one.gradient_accumulation_steps = 1;
  expect_bit_identical_resume(one, dir.path() / "m1");
}

TEST(GradientReductionTraining, OneAndTwoThreadsGiveTheSameBits) {
  test_support::ScratchDir dir;
  expect_same_bits_on_one_and_two_threads(reduction_config(dir.write("corpus.txt", generated_corpus()), "e4m3"),
                                          dir.path());
}

// The replica's gradients taken micro-batch by micro-batch (device_replica.hpp) on the guarded
// backend, its quantizer the CPU's: the CPU run's bits, under a recipe that quantizes too.
TEST(GradientReductionTraining, ADeviceRunGivesTheCpuRunsBits) {
  test_support::ScratchDir dir;
  config::TrainConfig c = reduction_config(dir.write("corpus.txt", generated_corpus()), "e4m3");
  c.quant = config::parse_config("[quant]\npreset = \"fp8-hybrid\"\n", "test.toml").quant;
  ASSERT_EQ(run(c, dir.path() / "cpu").stop_reason, "completed");
  model_test::GuardedBackend<float> guarded;
  GuardedQuantizer engine(guarded.memory);
  TrainOptions options;
  options.run_dir = dir.path() / "device";
  options.passes_device = PassesDevice{guarded.backend(), &engine};
  ASSERT_EQ(train(c, options).stop_reason, "completed");
  expect_same_run(dir.path() / "cpu", dir.path() / "device");
}

}  // namespace
}  // namespace altgrad::train
