// The range-fit ranking a report shows: points ordered by the values the candidate would lose
// (overflow + flush), the last profiled step's values, ties by name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/run_data.hpp"

namespace altgrad::report {
namespace {

void log_fit(RunData& run, const std::string& point, double overflow, double flush, double subnormal) {
  for (const auto& [stat, value] : {std::pair{"overflow_pct", overflow}, {"flush_pct", flush}, {"subnormal_pct", subnormal}}) {
    Series& s = run.series["diag/profile/" + point + "/fit/" + stat];
    s.steps = {100, 200};
    s.values = {value + 50, value};  // an older step that must not count
  }
}

TEST(RangeFitRanking, BestFitFirstFromTheLastProfiledStep) {
  RunData run;
  log_fit(run, "h.0.mlp.c_fc:act", 0.0, 7.0, 60.0);
  log_fit(run, "h.0.attn.probs", 0.0, 0.0, 99.0);
  log_fit(run, "h.0.attn.c_attn:grad", 2.0, 40.0, 30.0);
  log_fit(run, "h.0.attn.q", 3.0, 4.0, 10.0);  // loses 7, as c_fc:act does: by name
  const auto ranking = run.range_fit_ranking();
  std::vector<std::string> order;
  for (const auto& f : ranking) order.push_back(f.point);
  EXPECT_EQ(order, (std::vector<std::string>{"h.0.attn.probs", "h.0.attn.q", "h.0.mlp.c_fc:act", "h.0.attn.c_attn:grad"}));
  EXPECT_EQ(ranking.front().subnormal_pct, 99.0);
  EXPECT_EQ(ranking.back().flush_pct, 40.0);
  EXPECT_TRUE(RunData{}.range_fit_ranking().empty());
}

}  // namespace
}  // namespace altgrad::report
