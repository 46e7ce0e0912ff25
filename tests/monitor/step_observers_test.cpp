// Which steps the monitors claim: each observer plans its own interval, and the list holds the
// Hessian probe only when hessian_interval asks for it.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "config/config.hpp"
#include "monitor/step_observers.hpp"

namespace altgrad::monitor {
namespace {

monitor::StepPlan plan_of(const std::vector<std::unique_ptr<monitor::StepObserver>>& observers, std::int64_t done) {
  monitor::StepPlan plan;
  for (const auto& o : observers) o->plan(done, plan);
  return plan;
}

TEST(StepObservers, EachPlansTheStepsOfItsOwnInterval) {
  const config::TrainConfig config =
      config::parse_config("diag_interval = 4\nhessian_interval = 10\nlog_interval = 1000\n", "t.toml");
  const auto observers = monitor::step_observers(config, 64);
  for (std::int64_t done = 1; done <= 40; ++done) {
    const monitor::StepPlan plan = plan_of(observers, done);
    // Diagnostic steps write a line and need the points' details; Hessian steps write a line.
    EXPECT_EQ(plan.logged, done % 4 == 0 || done % 10 == 0) << "step " << done;
    EXPECT_EQ(plan.point_details, done % 4 == 0) << "step " << done;
  }
}

TEST(StepObservers, TheHessianProbeIsListedOnlyWhenAsked) {
  const config::TrainConfig with = config::parse_config("diag_interval = 4\nhessian_interval = 10\n", "t.toml");
  const config::TrainConfig without = config::parse_config("diag_interval = 4\n", "t.toml");
  EXPECT_EQ(monitor::step_observers(with, 64).size(), monitor::step_observers(without, 64).size() + 1);
  EXPECT_FALSE(plan_of(monitor::step_observers(without, 64), 10).logged);
}

}  // namespace
}  // namespace altgrad::monitor
