// The top Hessian eigenvalue in a training run: it leaves the run's bits alone (checkpoints and
// every other metric as with hessian_interval = 0), is the same on one and two threads and across
// resume, and is the estimate at the weights before the step, on the step's batch, unquantized.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "config/config.hpp"
#include "diag/hessian_power_iteration.hpp"
#include "format/philox_key.hpp"
#include "io/tensorboard_reader.hpp"
#include "model/activations.hpp"
#include "support/scratch_dir.hpp"
#include "train/training_data.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

std::string bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<nlohmann::json> metrics_without(const fs::path& run_dir, bool drop_hessian) {
  auto lines = json_lines(run_dir / "metrics.jsonl");
  for (auto& line : lines) {
    line.erase("tokens_per_s");
    if (drop_hessian && line.contains("diag")) {
      line["diag"].erase("hessian");
      if (line["diag"].empty()) line.erase("diag");
    }
  }
  return lines;
}

// fp8-hybrid: delayed scales whose history a stray quantized pass would change.
config::TrainConfig hessian_config(const fs::path& corpus) {
  config::TrainConfig c = tiny_config(corpus);
  c.quant = config::parse_config("[quant]\npreset = \"fp8-hybrid\"\n", "test.toml").quant;
  c.hessian_interval = 3;
  c.hessian_iterations = 4;
  return c;
}

TEST(HessianTraining, LeavesTheRunsBitsAsTheyAreWithoutIt) {
  test_support::ScratchDir dir;
  config::TrainConfig with = hessian_config(dir.write("corpus.txt", generated_corpus()));
  with.diag_interval = 4;  // steps 4 and 8 also take the diagnostics' shadow backward
  with.hessian_interval = 2;
  config::TrainConfig without = with;
  without.hessian_interval = 0;
  const TrainOutcome a = run(with, dir.path() / "with");
  const TrainOutcome b = run(without, dir.path() / "without");
  int compared = 0;
  for (const auto& entry : fs::directory_iterator(b.last_checkpoint)) {
    EXPECT_EQ(bytes_of(a.last_checkpoint / entry.path().filename()), bytes_of(entry.path())) << entry.path().filename();
    ++compared;
  }
  EXPECT_GE(compared, 4);  // model, optimizer, quantization state, state.json at least
  EXPECT_EQ(metrics_without(dir.path() / "with", true), metrics_without(dir.path() / "without", true));
  std::map<std::int64_t, double> logged_values;
  for (const auto& line : json_lines(dir.path() / "with" / "metrics.jsonl")) {
    const bool due = line.at("step").get<int>() % 2 == 0;
    ASSERT_EQ(line.contains("diag") && line["diag"].contains("hessian"), due) << line.dump();
    if (!due) continue;
    logged_values[line.at("step").get<std::int64_t>()] = line["diag"]["hessian"]["top_eigenvalue"].get<double>();
    EXPECT_TRUE(std::isfinite(line["diag"]["hessian"]["top_eigenvalue"].get<double>()));
    EXPECT_EQ(line["diag"]["hessian"]["iterations"].get<int>(), 4);
  }
  EXPECT_EQ(logged_values.size(), 4u);  // steps 2, 4, 6, 8
  // TensorBoard has the same values under diag/hessian/top_eigenvalue, their metrics path.
  std::map<std::int64_t, double> scalars;
  for (const auto& entry : fs::directory_iterator(dir.path() / "with")) {
    if (!entry.path().filename().string().starts_with("events.out.tfevents.")) continue;
    for (const auto& e : io::read_tensorboard_events(entry.path())) {
      for (const auto& s : e.scalars) {
        if (s.tag == "diag/hessian/top_eigenvalue") scalars[e.step] = s.value;
      }
    }
  }
  ASSERT_EQ(scalars.size(), logged_values.size());
  for (const auto& [step, value] : logged_values) EXPECT_EQ(scalars.at(step), static_cast<float>(value)) << step;
}

TEST(HessianTraining, TheSameOnOneAndTwoThreadsAndAcrossResume) {
  test_support::ScratchDir dir;
  const config::TrainConfig full = hessian_config(dir.write("corpus.txt", generated_corpus()));
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  run(full, dir.path() / "one");
  omp_set_num_threads(2);
  run(full, dir.path() / "two");
  config::TrainConfig half = full;
  half.max_iters = 4;
  run(half, dir.path() / "split");
  run(full, dir.path() / "split", /*resume=*/true);
  omp_set_num_threads(saved);
  EXPECT_EQ(metrics_without(dir.path() / "one", false), metrics_without(dir.path() / "two", false));
  EXPECT_EQ(metrics_without(dir.path() / "split", false), metrics_without(dir.path() / "two", false));
}

// Step 1's estimate is the one at the initial weights on batch (step 0, micro-step 0), through the
// unquantized model: recomputed here from those, it matches the logged value bit for bit.
TEST(HessianTraining, IsTheEstimateAtTheWeightsBeforeTheStepOnItsBatch) {
  test_support::ScratchDir dir;
  config::TrainConfig c = hessian_config(dir.write("corpus.txt", generated_corpus()));
  c.hessian_interval = 1;
  c.max_iters = 1;
  run(c, dir.path() / "run");
  const double logged =
      json_lines(dir.path() / "run" / "metrics.jsonl").at(0).at("diag").at("hessian").at("top_eigenvalue").get<double>();

  model::Gpt<float> gpt(config::gpt_config(c));
  gpt.initialize(c.seed);
  const data::ByteDataset data = load_training_data(c, ALTGRAD_SOURCE_DIR);
  std::vector<std::int32_t> x(static_cast<std::size_t>(c.batch_size * c.block_size)), y(x.size());
  data.get_batch(data::BatchKey::training(0, 0), c.batch_size, c.block_size, x, y);
  model::Activations<float> acts(gpt.config(), static_cast<std::size_t>(c.batch_size), static_cast<std::size_t>(c.block_size));
  diag::HessianPowerIteration power(gpt.parameters().size());
  const diag::HessianEstimate expected = power.estimate(
      gpt.parameters(),
      [&](std::span<float> out) {
        gpt.zero_gradients();
        model::gpt_forward(gpt, acts, x, y);
        model::gpt_backward(gpt, acts);
        std::copy(gpt.gradients().begin(), gpt.gradients().end(), out.begin());
      },
      {c.hessian_epsilon, c.hessian_iterations, format::philox_key(c.seed, format::RandomPurpose::hessian_probe), 0});
  EXPECT_EQ(logged, expected.eigenvalue);
}

TEST(HessianTraining, ConfigKeysAreCheckedWithFileAndLine) {
  EXPECT_THROW(config::parse_config("hessian_interval = -1\n", "bad.toml"), config::ConfigError);
  EXPECT_THROW(config::parse_config("hessian_iterations = 0\n", "bad.toml"), config::ConfigError);
  EXPECT_THROW(config::parse_config("hessian_epsilon = 0.0\n", "bad.toml"), config::ConfigError);
  const config::TrainConfig c = config::parse_config("hessian_interval = 50\nhessian_iterations = 7\nhessian_epsilon = 0.01\n", "ok.toml");
  EXPECT_EQ(c.hessian_interval, 50);
  EXPECT_EQ(c.hessian_iterations, 7);
  EXPECT_EQ(c.hessian_epsilon, 0.01);
}

// The end event and the outcome carry the bytes of weights and optimizer state.
TEST(MemorySummary, EndEventReportsWeightAndStateBytes) {
  test_support::ScratchDir dir;
  config::TrainConfig c = tiny_config(dir.write("corpus.txt", generated_corpus()));
  c.max_iters = 1;
  c.optimizer = config::OptimizerKind::madam;
  const TrainOutcome outcome = run(c, dir.path() / "run");
  const auto events = json_lines(dir.path() / "run" / "events.jsonl");
  const nlohmann::json& memory = events.back().at("memory");
  const std::size_t n = outcome.parameters;
  EXPECT_EQ(n, model::Gpt<float>(config::gpt_config(c)).parameters().size());
  EXPECT_EQ(memory.at("weight_bytes").get<std::size_t>(), 4 * n);
  EXPECT_EQ(memory.at("optimizer_state_bytes").get<std::size_t>(), 3 * 4 * n);  // exp_avg, exp_avg_sq, weight_bound
  EXPECT_EQ(memory.at("total_bytes").get<std::size_t>(), 4 * 4 * n);
  EXPECT_EQ(memory.at("state_bytes").at("weight_bound").get<std::size_t>(), 4 * n);
  EXPECT_EQ(outcome.memory.total_bytes(), 4 * 4 * n);
}

}  // namespace
}  // namespace altgrad::train
