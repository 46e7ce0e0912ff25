// The cost of a result in the end event: the first evaluation at or below target_loss in steps,
// tokens and seconds, kept across a resume; "not reached" as a value; the last checkpoint's bytes.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "support/scratch_dir.hpp"
#include "train/training_run.hpp"

namespace altgrad::train {
namespace {

using namespace train_test;

config::TrainConfig with_target(const fs::path& corpus, double target) {
  config::TrainConfig c = tiny_config(corpus);  // 8 steps, evaluations at 4 and 8, checkpoints at 4 and 8
  c.eval_interval = 2;
  c.target_loss = target;
  return c;
}

nlohmann::json end_cost(const fs::path& run_dir) {
  return json_lines(run_dir / "events.jsonl").back().at("cost");
}

TEST(RunCost, TheFirstEvaluationAtOrBelowTheTargetIsReported) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  (void)run(with_target(corpus, 0), dir.path() / "probe");
  // A target between the evaluations of steps 2 and 6: the first at or below it is reached.
  std::vector<std::pair<std::int64_t, double>> evaluated;
  for (const auto& line : json_lines(dir.path() / "probe" / "metrics.jsonl")) {
    if (line.contains("val_loss")) evaluated.emplace_back(line.at("step"), line.at("val_loss"));
  }
  ASSERT_EQ(evaluated.size(), 4u);
  const double target = (evaluated[1].second + evaluated[2].second) / 2;
  std::int64_t want = -1;
  for (const auto& [step, loss] : evaluated) {
    if (want < 0 && loss <= target) want = step;
  }
  ASSERT_GT(want, 2);

  const config::TrainConfig c = with_target(corpus, target);
  const TrainOutcome outcome = run(c, dir.path() / "run");
  const nlohmann::json cost = end_cost(dir.path() / "run");
  EXPECT_TRUE(cost.at("reached").get<bool>());
  EXPECT_EQ(cost.at("step").get<std::int64_t>(), want);
  EXPECT_EQ(cost.at("tokens").get<std::int64_t>(), want * c.batch_size * c.block_size);
  EXPECT_GT(cost.at("seconds").get<double>(), 0.0);
  EXPECT_LE(cost.at("seconds").get<double>(), cost.at("train_seconds").get<double>());
  EXPECT_GT(cost.at("peak_rss_bytes").get<double>(), 1e6);
  std::uint64_t bytes = 0;
  for (const auto& f : fs::directory_iterator(outcome.last_checkpoint)) bytes += f.file_size();
  EXPECT_EQ(cost.at("checkpoint_bytes").get<std::uint64_t>(), bytes);

  // Resumed after the target was reached: the same step and seconds, and the clock goes on.
  config::TrainConfig half = c;
  half.max_iters = 4;
  (void)run(half, dir.path() / "split");
  const double first_session = end_cost(dir.path() / "split").at("train_seconds").get<double>();
  (void)run(c, dir.path() / "split", /*resume=*/true);
  const nlohmann::json resumed = end_cost(dir.path() / "split");
  EXPECT_EQ(resumed.at("step"), cost.at("step"));
  EXPECT_GT(resumed.at("train_seconds").get<double>(), first_session);
}

TEST(RunCost, NotReachedIsAValue) {
  test_support::ScratchDir dir;
  const fs::path corpus = dir.write("corpus.txt", generated_corpus());
  for (const double target : {0.0, 0.01}) {  // no target; one this run cannot reach
    const fs::path run_dir = dir.path() / ("run" + std::to_string(target));
    (void)run(with_target(corpus, target), run_dir);
    const nlohmann::json cost = end_cost(run_dir);
    EXPECT_FALSE(cost.at("reached").get<bool>());
    EXPECT_TRUE(cost.at("step").is_null());
    EXPECT_TRUE(cost.at("tokens").is_null());
    EXPECT_EQ(cost.at("target_loss").is_null(), target == 0.0);
  }
}

}  // namespace
}  // namespace altgrad::train
