// The error sums behind rel_error on logged steps only (docs/quantization.md, "Which steps gather
// what"): a run that logs every third step trains the same bits as one that logs every step (its
// unlogged steps skip the sums), and each of its metrics lines holds the rel_error of its own step,
// as the run that logs every step has it, beside the amax and counts of every step since the line
// before.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "support/scratch_dir.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

// Steps 1–6: a line every third step, at the evaluation (4), at the diagnostic step (5) and at the
// last step, so that steps 1 and 2 are the unlogged ones; or a line every step.
config::TrainConfig every_nth_logged(const fs::path& corpus, const std::string& quant_toml, std::int64_t log_interval) {
  config::TrainConfig c = tiny_config(corpus);
  c.quant = config::parse_config(quant_toml, "test.toml").quant;
  c.max_iters = 6;
  c.diag_interval = 5;
  c.log_interval = log_interval;
  return c;
}

// Each metrics line by its step.
std::map<std::int64_t, nlohmann::json> lines_by_step(const fs::path& run_dir) {
  std::map<std::int64_t, nlohmann::json> lines;
  for (const nlohmann::json& line : json_lines(run_dir / "metrics.jsonl")) lines[line.at("step").get<std::int64_t>()] = line;
  return lines;
}

// A point's statistics (or its column-wise copies') in a sparse run's line against the run that
// logs every step: rel_error that of the line's own step, amax the largest of steps (first, last].
void expect_interval_statistics(const nlohmann::json& sparse, const std::map<std::int64_t, nlohmann::json>& every,
                                std::int64_t first, std::int64_t last, const std::string& point, bool columns) {
  const auto stats_at = [&](std::int64_t step) -> const nlohmann::json& {
    const nlohmann::json& p = every.at(step).at("quant").at(point);
    return columns ? p.at("colwise") : p;
  };
  const std::string where = point + (columns ? " (colwise)" : "") + " at step " + std::to_string(last);
  EXPECT_EQ(sparse.at("rel_error").get<double>(), stats_at(last).at("rel_error").get<double>()) << where;
  EXPECT_GT(sparse.at("rel_error").get<double>(), 0.0) << where;
  double amax = 0.0;
  for (std::int64_t step = first + 1; step <= last; ++step) amax = std::max(amax, stats_at(step).at("amax").get<double>());
  EXPECT_EQ(sparse.at("amax").get<double>(), amax) << where;
}

void expect_same_run_with_fewer_lines(const std::string& quant_toml) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  ASSERT_EQ(run(every_nth_logged(corpus, quant_toml, 1), dir.path() / "every").stop_reason, "completed");
  ASSERT_EQ(run(every_nth_logged(corpus, quant_toml, 3), dir.path() / "sparse").stop_reason, "completed");
  // Every file of both checkpoints: model, optimizer, the quantization state where there is one.
  std::size_t files = 0;
  for (const char* step : {"step_4", "step_6"}) {
    for (const auto& entry : fs::directory_iterator(dir.path() / "every" / "checkpoints" / step)) {
      if (entry.path().extension() != ".safetensors") continue;
      const fs::path relative = fs::path("checkpoints") / step / entry.path().filename();
      EXPECT_EQ(bytes_of(dir.path() / "sparse" / relative), bytes_of(entry.path())) << relative;
      ++files;
    }
  }
  EXPECT_GE(files, 4u);
  const auto every = lines_by_step(dir.path() / "every");
  const auto sparse = lines_by_step(dir.path() / "sparse");
  std::vector<std::int64_t> steps;
  for (const auto& [step, line] : sparse) steps.push_back(step);
  ASSERT_EQ(steps, (std::vector<std::int64_t>{3, 4, 5, 6}));
  std::int64_t previous = 0;
  for (const auto& [step, line] : sparse) {
    EXPECT_EQ(line.at("loss").get<double>(), every.at(step).at("loss").get<double>()) << "step " << step;
    for (const auto& [point, stats] : line.at("quant").items()) {
      expect_interval_statistics(stats, every, previous, step, point, false);
      if (stats.contains("colwise")) expect_interval_statistics(stats.at("colwise"), every, previous, step, point, true);
    }
    previous = step;
  }
}

TEST(ErrorSumsTraining, PerTensorScalingSkipsTheSumsOnUnloggedStepsAndChangesNoBit) {
  expect_same_run_with_fewer_lines("[quant]\npreset = \"fp8-hybrid\"\n[quant.grad]\nrounding = \"stochastic\"\n");
}

TEST(ErrorSumsTraining, BlockScalingSkipsTheSumsOnUnloggedStepsAndChangesNoBit) {
  expect_same_run_with_fewer_lines("[quant]\npreset = \"mx8\"\n");
}

}  // namespace
}  // namespace altgrad::train
