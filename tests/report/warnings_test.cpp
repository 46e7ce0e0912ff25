// Warnings as the report reads them: a start-up event (delayed scaling's first step, with no amax
// history yet) is neither the early warning nor a counted warning, and is listed apart; each
// group's warnings are counted in all and per run, in the group table and the terminal summary.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/page_data.hpp"
#include "report/report_model.hpp"
#include "report/tables.hpp"
#include "report/text_summary.hpp"
#include "sweep_writer.hpp"

namespace altgrad::report {
namespace {

using nlohmann::json;
using sweep_writer::SweepRun;
using sweep_writer::TempSweep;

// As the trainer writes them (monitor/warnings.hpp).
json start_up_event(const std::string& point) {
  return {{"event", "start_up"}, {"step", 1}, {"kind", "no_history"}, {"where", point}, {"statistic", "underflow"},
          {"value", 92.5}, {"message", point + " flushes 92.5% of its values to zero at delayed scaling's first step"}};
}

json warning_event(std::int64_t step, const std::string& where) {
  return {{"event", "warning"}, {"step", step}, {"kind", "overflow"}, {"where", where}, {"value", 1.5},
          {"threshold", 1.0}, {"message", where + " overflows 1.5% of its values"}};
}

std::vector<json> warnings(int count) {
  std::vector<json> events = {start_up_event("h.0.attn.c_attn:grad")};
  for (int i = 0; i < count; ++i) events.push_back(warning_event(40 + i, "h.0.mlp.c_fc:act"));
  return events;
}

TEST(StartUpEvents, AreNeitherTheEarlyWarningNorCountedAndAreListedApart) {
  TempSweep sweep;
  SweepRun run{"fp8-hybrid", 1, 2.0, "fp8-hybrid"};
  run.events = {start_up_event("h.0.attn.c_attn:grad"), start_up_event("h.1.attn.c_attn:grad"),
                warning_event(40, "h.0.mlp.c_fc:act"), start_up_event("h.0.mlp.c_fc:grad")};
  sweep.write({run});
  const Report report = build_report(sweep.path());
  const RunData& read = report.runs.at(0);
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_EQ(read.warnings[0].step, 40);
  ASSERT_EQ(read.start_up.size(), 3u);
  EXPECT_EQ(read.start_up[1].point, "h.1.attn.c_attn:grad");
  EXPECT_EQ(read.start_up[1].statistic, "underflow");
  EXPECT_EQ(report.groups[0].warnings.total, 1u);

  const std::string md = report_markdown(report);
  const auto runs = sweep_writer::markdown_table(md, "## Runs");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].back(), "step 40: overflow at h.0.mlp.c_fc:act");
  EXPECT_EQ(sweep_writer::markdown_table(md, "## Warnings and stop reasons").size(), 2u);
  const auto start_up = sweep_writer::markdown_table(md, "## Start-up events");
  ASSERT_EQ(start_up.size(), 4u) << md;
  EXPECT_EQ(start_up[2][3], "h.1.attn.c_attn:grad");

  const json data = page_data(report);
  EXPECT_EQ(data["runs"][0]["first_warning"]["step"], 40);
  EXPECT_EQ(data["runs"][0]["warnings"], 1);
  EXPECT_EQ(data["events"].size(), 1u);
  ASSERT_EQ(data["start_up"].size(), 3u);
  EXPECT_EQ(data["start_up"][2]["point"], "h.0.mlp.c_fc:grad");
}

// e3m4: 3, 5 and 4 warnings (each run also has a start-up event, not counted) and a pending run,
// which has had no chance to warn; calm: 2 and 2; quiet: none.
TEST(WarningCounts, SumAndPerRunRangeInTheGroupTableAndTheSummary) {
  TempSweep sweep;
  std::vector<SweepRun> runs = {{"bf16", 1, 2.0}};
  for (const auto& [seed, count] : std::vector<std::pair<int, int>>{{1, 3}, {2, 5}, {3, 4}}) {
    runs.push_back({"e3m4", seed, 2.1, "fp8-hybrid", {{"act.format", "\"e3m4\""}}, warnings(count)});
  }
  runs.push_back({"e3m4", 4, 2.1, "fp8-hybrid", {{"act.format", "\"e3m4\""}}, {}, true});
  for (const int seed : {1, 2}) runs.push_back({"calm", seed, 2.0, "fp8-hybrid", {}, warnings(2)});
  runs.push_back({"quiet", 1, 2.0, "fp8-hybrid", {{"act.format", "\"e4m3\""}}, warnings(0)});
  sweep.write(runs);
  const Report report = build_report(sweep.path());
  const WarningCount& e3m4 = report.groups.at(1).warnings;
  EXPECT_EQ(e3m4.runs, 3u);
  EXPECT_EQ(e3m4.total, 12u);
  EXPECT_EQ(e3m4.min_per_run, 3u);
  EXPECT_EQ(e3m4.max_per_run, 5u);

  const auto table = sweep_writer::markdown_table(report_markdown(report), "## Groups");
  const auto column = [&](const std::string& header) {
    return std::find(table[0].begin(), table[0].end(), header) - table[0].begin();
  };
  ASSERT_EQ(table.size(), 5u);
  EXPECT_EQ(table[2][0], "e3m4");
  EXPECT_EQ(table[2][column("warnings")], "12");
  EXPECT_EQ(table[2][column("warnings/run min")], "3");
  EXPECT_EQ(table[2][column("warnings/run max")], "5");

  const std::string summary = "\n" + text_summary(report);
  std::vector<std::string> endings;
  for (const std::string group : {"e3m4 ", "calm ", "quiet"}) {
    const auto start = summary.find("\n" + group);
    ASSERT_NE(start, std::string::npos) << summary;
    const auto end = summary.find('\n', start + 1);
    const std::string line = summary.substr(start + 1, end - start - 1);
    endings.push_back(line.substr(line.rfind("  ") + 2));
  }
  EXPECT_EQ(endings, (std::vector<std::string>{"warnings 3-5 per run", "warnings 2 per run", "warnings 0"})) << summary;
}

}  // namespace
}  // namespace altgrad::report
