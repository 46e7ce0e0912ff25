// The group table (report.md and report.html): every number in a column of its own, equal to the
// statistics recomputed here from the chosen losses; and each group named as the sweep file names
// it, beside the preset its recipe starts from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "report/group_table.hpp"
#include "report/page_data.hpp"
#include "report/report_model.hpp"
#include "report/statistics.hpp"
#include "report/tables.hpp"
#include "report/text_summary.hpp"
#include "sweep_writer.hpp"

namespace altgrad::report {
namespace {

using sweep_writer::SweepRun;
using sweep_writer::TempSweep;

const std::vector<std::string> kGroupColumns = {
    "group", "base preset", "runs", "diverged", "seeds", "val loss mean", "val loss ±95%", "val loss sd",
    "val loss min", "val loss max", "baseline", "gap %", "paired gap %", "paired low %", "paired high %",
    "paired seeds", "seeds agreeing", "sd ratio", "sd F test p", "sd Levene p", "warnings", "warnings/run min", "warnings/run max", "ended", "reached target",
    "tokens to target", "s to target", "peak RSS MiB", "checkpoint MiB"};

// bf16 and e3m4 (fp8-hybrid with e3m4 activations) over three seeds, judged within 2% of bf16.
std::vector<SweepRun> three_seeds() {
  const std::vector<std::pair<double, double>> losses = {{2.00, 2.02}, {2.03, 2.05}, {1.99, 1.98}};
  std::vector<SweepRun> runs;
  for (std::int64_t seed = 1; seed <= 3; ++seed) runs.push_back({"bf16", seed, losses[seed - 1].first});
  for (std::int64_t seed = 1; seed <= 3; ++seed) {
    runs.push_back({"e3m4", seed, losses[seed - 1].second, "fp8-hybrid", {{"act.format", "\"e3m4\""}}});
  }
  return runs;
}

// One row of report.md's group table, by header.
std::map<std::string, std::string> markdown_row(const std::string& md, const std::string& group) {
  const auto rows = sweep_writer::markdown_table(md, "## Groups");
  std::map<std::string, std::string> cells;
  for (const auto& row : rows) {
    if (row.front() != group) continue;
    for (std::size_t i = 0; i < row.size(); ++i) cells[rows.front()[i]] = row[i];
  }
  return cells;
}

double markdown_number(const std::map<std::string, std::string>& row, const std::string& column) {
  const auto it = row.find(column);
  return it == row.end() ? NAN : std::strtod(it->second.c_str(), nullptr);
}

TEST(GroupTable, HasTheSameColumnsInReportMdAndThePageWithoutTheMachinesCostsInMd) {
  TempSweep sweep;
  sweep.write(three_seeds(), {sweep_writer::criterion("bf16", 2)});
  const Report report = build_report(sweep.path());
  std::vector<std::string> headers;
  for (const GroupColumn& c : group_columns()) headers.push_back(c.header);
  EXPECT_EQ(headers, kGroupColumns);
  const nlohmann::json data = page_data(report);
  EXPECT_EQ(data["group_table"]["columns"].get<std::vector<std::string>>(), kGroupColumns);
  ASSERT_EQ(data["group_table"]["rows"].size(), 2u);
  EXPECT_EQ(data["group_table"]["rows"][0].size(), kGroupColumns.size());
  std::vector<std::string> in_md = kGroupColumns;
  std::erase(in_md, "s to target");
  std::erase(in_md, "peak RSS MiB");
  EXPECT_EQ(sweep_writer::markdown_table(report_markdown(report), "## Groups").front(), in_md);
}

// Seed by seed the gaps are +1%, +0.985%, -0.503%: their mean, and Student's t at 2 degrees of
// freedom (4.30265273) times sd / sqrt(3) on each side.
TEST(GroupTable, EveryNumberIsACellOfItsOwnEqualToTheStatisticsRecomputed) {
  TempSweep sweep;
  sweep.write(three_seeds(), {sweep_writer::criterion("bf16", 2)});
  const std::string md = report_markdown(build_report(sweep.path()));
  const auto row = markdown_row(md, "e3m4");
  const std::vector<double> gaps = {100 * (2.02 - 2.00) / 2.00, 100 * (2.05 - 2.03) / 2.03, 100 * (1.98 - 1.99) / 1.99};
  const double mean = (gaps[0] + gaps[1] + gaps[2]) / 3;
  double squares = 0;
  for (const double g : gaps) squares += (g - mean) * (g - mean);
  const double half = 4.30265273 * std::sqrt(squares / 2) / std::sqrt(3.0);
  const double loss = (2.02 + 2.05 + 1.98) / 3, base = (2.00 + 2.03 + 1.99) / 3;
  double loss_squares = 0;
  for (const double v : {2.02, 2.05, 1.98}) loss_squares += (v - loss) * (v - loss);
  const double tolerance = 1e-7;
  EXPECT_EQ(row.at("baseline"), "bf16");
  EXPECT_EQ(row.at("seeds"), "3");
  EXPECT_NEAR(markdown_number(row, "val loss mean"), loss, tolerance);
  EXPECT_NEAR(markdown_number(row, "val loss ±95%"), 4.30265273 * std::sqrt(loss_squares / 2) / std::sqrt(3.0), tolerance);
  EXPECT_NEAR(markdown_number(row, "val loss sd"), std::sqrt(loss_squares / 2), tolerance);
  EXPECT_NEAR(markdown_number(row, "gap %"), 100 * (loss - base) / base, tolerance);
  EXPECT_NEAR(markdown_number(row, "paired gap %"), mean, tolerance);
  EXPECT_NEAR(markdown_number(row, "paired low %"), mean - half, tolerance);
  EXPECT_NEAR(markdown_number(row, "paired high %"), mean + half, tolerance);
  EXPECT_EQ(row.at("paired seeds"), "3");
  EXPECT_EQ(row.at("seeds agreeing"), "2");  // the third seed's gap is negative
  // The spreads: F = s²/s_b² on (2, 2), whose P(F ≤ f) is f/(1 + f); Brown–Forsythe's deviations
  // from the medians 2.02 and 2.00 are {0, .03, .04} and {0, .03, .01}, and W on (1, 4) is T² on 4.
  double base_squares = 0;
  for (const double v : {2.00, 2.03, 1.99}) base_squares += (v - base) * (v - base);
  const double f = loss_squares / base_squares;
  EXPECT_NEAR(markdown_number(row, "sd ratio"), std::sqrt(f), tolerance);
  EXPECT_NEAR(markdown_number(row, "sd F test p"), 2 * std::min(f / (1 + f), 1 / (1 + f)), tolerance);
  const double za = 0.07 / 3, zb = 0.04 / 3, grand = (za + zb) / 2;
  const double between = 3 * ((za - grand) * (za - grand) + (zb - grand) * (zb - grand));
  double within = 0;
  for (const double z : {0.0, 0.03, 0.04}) within += (z - za) * (z - za);
  for (const double z : {0.0, 0.03, 0.01}) within += (z - zb) * (z - zb);
  EXPECT_NEAR(markdown_number(row, "sd Levene p"), t_two_sided_p(std::sqrt(4 * between / within), 4), tolerance);
  // No sentence in a cell: each is a number, a dash, or a name.
  for (const auto& [column, cell] : row) {
    char* end = nullptr;
    std::strtod(cell.c_str(), &end);
    const bool number = !cell.empty() && *end == '\0';
    EXPECT_TRUE(number || cell == "—" || cell == "e3m4" || cell == "fp8-hybrid" || cell == "bf16") << column << ": " << cell;
  }
  // Their reading stays in the verdict table.
  EXPECT_NE(md.find("| e3m4 | inconclusive | inconclusive | gap +0.49% [-1.65, +2.64] over 3 seeds, straddles 2%"),
            std::string::npos) << md;
}

// e3m4 and e1m6 are recipes of their own on fp8-hybrid, e1m6-post-ln one on bf16: each row is
// named by its group, with the preset beside it; and a recipe built on bf16 is no bf16 baseline,
// whichever group comes first.
TEST(GroupTable, NamesEachRecipeAsTheSweepFileDoesBesideItsBasePreset) {
  TempSweep sweep;
  std::vector<SweepRun> runs;
  for (std::int64_t seed = 1; seed <= 2; ++seed) {
    runs.push_back({"e1m6-post-ln", seed, 2.04, "bf16", {{"act.format", "\"e1m6\""}}});
    runs.push_back({"bf16", seed, 2.00});
    runs.push_back({"e3m4", seed, 2.02, "fp8-hybrid", {{"act.format", "\"e3m4\""}, {"weight.format", "\"e3m4\""}}});
    runs.push_back({"e1m6", seed, 2.03, "fp8-hybrid", {{"act.format", "\"e1m6\""}}});
  }
  sweep.write(runs);
  const Report report = build_report(sweep.path());
  const auto rows = sweep_writer::markdown_table(report_markdown(report), "## Groups");
  ASSERT_EQ(rows.size(), 5u);
  const std::vector<std::vector<std::string>> names = {{"e1m6-post-ln", "bf16"}, {"bf16", "bf16"},
                                                       {"e3m4", "fp8-hybrid"}, {"e1m6", "fp8-hybrid"}};
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(std::vector<std::string>(rows[i + 1].begin(), rows[i + 1].begin() + 2), names[i]);
    EXPECT_EQ(page_data(report)["group_table"]["rows"][i][0], names[i][0]);
  }
  EXPECT_EQ(report.groups[0].bf16_baseline, "bf16");
  EXPECT_EQ(markdown_row(report_markdown(report), "e1m6-post-ln").at("baseline"), "bf16");
  EXPECT_NE(text_summary(report).find("e1m6-post-ln  val loss 2.0400"), std::string::npos) << text_summary(report);
}

}  // namespace
}  // namespace altgrad::report
