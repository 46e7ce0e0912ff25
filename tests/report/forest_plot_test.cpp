// The forest plot's rows: one per group and baseline the criteria compare, in group order, with
// the very gap its verdicts judged (and that the group table shows), coloured by the verdict on
// the loosest criterion.
#include <gtest/gtest.h>

#include <cmath>

#include <string>
#include <vector>

#include "report/forest_plot.hpp"
#include "report/group_table.hpp"
#include "report/page_data.hpp"
#include "report/report_model.hpp"
#include "sweep_writer.hpp"

namespace altgrad::report {
namespace {

using nlohmann::json;
using sweep_writer::SweepRun;
using sweep_writer::TempSweep;

// Paired gaps over three seeds against bf16 at 2.00, 2.03, 1.99: "close" about +1% with a narrow
// interval (inconclusive within 1%, pass within 2%), "far" about +10% (fail on both).
std::vector<SweepRun> close_and_far() {
  const std::vector<double> bf16 = {2.00, 2.03, 1.99};
  std::vector<SweepRun> runs;
  for (std::int64_t s = 1; s <= 3; ++s) runs.push_back({"bf16", s, bf16[s - 1]});
  for (std::int64_t s = 1; s <= 3; ++s) runs.push_back({"close", s, bf16[s - 1] * (1.0090 + 0.0005 * s), "fp8-hybrid"});
  for (std::int64_t s = 1; s <= 3; ++s) runs.push_back({"far", s, bf16[s - 1] * (1.10 + 0.001 * s), "fp8-hybrid", {{"act.format", "\"e7m0\""}}});
  return runs;
}

std::size_t column(const std::string& header) {
  const auto& columns = group_columns();
  return std::find_if(columns.begin(), columns.end(), [&](const GroupColumn& c) { return c.header == header; }) -
         columns.begin();
}

TEST(ForestPlot, OneRowPerComparedGroupColouredByTheLoosestVerdict) {
  TempSweep sweep;
  // The looser criterion first: the colour must not be the first criterion's by accident.
  sweep.write(close_and_far(), {sweep_writer::criterion("bf16", 2), sweep_writer::criterion("bf16", 1)});
  const Report report = build_report(sweep.path());
  const auto rows = forest_rows(report);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].group, "close");
  EXPECT_EQ(rows[1].group, "far");
  EXPECT_EQ(rows[0].baseline, "bf16");
  ASSERT_EQ(rows[0].verdicts.size(), 2u);
  EXPECT_EQ(report.verdicts[rows[0].verdicts[0]].judgement.verdict, Verdict::pass);          // within 2%
  EXPECT_EQ(report.verdicts[rows[0].verdicts[1]].judgement.verdict, Verdict::inconclusive);  // within 1%
  EXPECT_EQ(rows[0].colour, Verdict::pass);
  EXPECT_EQ(rows[1].colour, Verdict::fail);
  EXPECT_EQ(forest_thresholds(report), (std::vector<double>{1, 2}));
  // The verdict's own gap, the one the group table shows.
  EXPECT_EQ(rows[0].gap, &report.verdicts[rows[0].verdicts[0]].gap);
  EXPECT_EQ(rows[0].gap->gap_pct.mean, report.groups[1].comparison->paired.gap_pct.mean);
}

TEST(ForestPlot, ThePagesRowsReadTheGroupTablesNumbers) {
  TempSweep sweep;
  sweep.write(close_and_far(), {sweep_writer::criterion("bf16", 1), sweep_writer::criterion("bf16", 2)});
  const Report report = build_report(sweep.path());
  const json data = page_data(report);
  const std::vector<ForestRow> model = forest_rows(report);
  EXPECT_EQ(data["forest"]["thresholds"], json::array({1.0, 2.0}));
  const json& rows = data["forest"]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& cells = data["group_table"]["rows"][i + 1];  // after bf16's
    EXPECT_EQ(rows[i]["group"], cells[column("group")]);
    EXPECT_EQ(rows[i]["gap"], cells[column("paired gap %")]);
    EXPECT_EQ(rows[i]["low"], cells[column("paired low %")]);
    EXPECT_EQ(rows[i]["high"], cells[column("paired high %")]);
    EXPECT_EQ(rows[i]["seeds"], cells[column("paired seeds")]);
    EXPECT_TRUE(rows[i]["low"].is_number()) << rows[i];
    // Behind it, the interval the colour's verdict (within 2%, the loosest) was decided on.
    const VerdictRow& coloured = report.verdicts[model[i].coloured_by];
    EXPECT_EQ(report.index.criteria[coloured.criterion].max_gap_pct, 2.0);
    ASSERT_TRUE(coloured.correction) << rows[i];
    // The page rounds to four significant digits, as the group table's cells.
    EXPECT_NEAR(rows[i]["corrected_low"].get<double>(), coloured.correction->ci_low, 5e-4 * std::fabs(coloured.correction->ci_low));
    EXPECT_NEAR(rows[i]["corrected_high"].get<double>(), coloured.correction->ci_high,
                5e-4 * std::fabs(coloured.correction->ci_high));
    EXPECT_EQ(rows[i]["corrected_level"].get<double>(), coloured.correction->level);
    EXPECT_LT(rows[i]["corrected_low"].get<double>(), rows[i]["low"].get<double>());
  }
  EXPECT_EQ(rows[0]["verdict"], "pass");
  EXPECT_EQ(rows[0]["verdicts"][0]["verdict"], "inconclusive");
}

// Criteria against two baselines: a row per group and baseline, bf16 itself compared with fp32.
TEST(ForestPlot, TwoBaselinesGiveARowPerGroupAndBaseline) {
  TempSweep sweep;
  std::vector<SweepRun> runs = close_and_far();
  for (std::int64_t s = 1; s <= 3; ++s) runs.push_back({"fp32", s, 2.0, "fp32"});
  sweep.write(runs, {sweep_writer::criterion("bf16", 2), sweep_writer::criterion("fp32", 2)});
  const auto rows = forest_rows(build_report(sweep.path()));
  std::vector<std::string> names;
  for (const ForestRow& row : rows) names.push_back(row.group + " vs " + row.baseline);
  EXPECT_EQ(names, (std::vector<std::string>{"bf16 vs fp32", "close vs bf16", "close vs fp32", "far vs bf16",
                                             "far vs fp32", "fp32 vs bf16"}));
}

}  // namespace
}  // namespace altgrad::report
