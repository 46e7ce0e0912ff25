// The report of tests/report/fixture (real tiny runs, tests/report/make_fixture.sh) against values
// recomputed here straight from the runs' metrics.jsonl and events.jsonl.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/page_data.hpp"
#include "report/report_model.hpp"
#include "report/tables.hpp"
#include "report/text_summary.hpp"
#include "report/write_report.hpp"

namespace altgrad::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kFixture = fs::path(ALTGRAD_SOURCE_DIR) / "tests" / "report" / "fixture";

std::vector<json> read_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(json::parse(line));
  }
  return lines;
}

// The last number logged under `key` ("quant/h.0.mlp.c_fc:act/amax" as a JSON pointer).
std::optional<double> last_logged(const std::vector<json>& lines, const std::string& key) {
  std::optional<double> last;
  const json::json_pointer pointer("/" + key);
  for (const json& line : lines) {
    if (line.contains(pointer) && line[pointer].is_number()) last = line[pointer].get<double>();
  }
  return last;
}

std::optional<double> last_logged(const fs::path& run, const std::string& key) {
  return last_logged(read_lines(run / "metrics.jsonl"), key);
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      field += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  fields.push_back(field);
  return fields;
}

TEST(SummaryCsv, EveryFinalMetricEqualsTheLastValueInMetricsJsonl) {
  const Report report = build_report(kFixture);
  std::istringstream csv(summary_csv(report));
  std::string line;
  std::getline(csv, line);
  const auto header = split_csv_line(line);
  ASSERT_EQ(header[0], "run");
  ASSERT_EQ(header[5], "final_val_loss");
  EXPECT_GT(header.size(), 200u);  // every quant point, diagnostic and curve of the tiny model
  std::size_t rows = 0, compared = 0;
  while (std::getline(csv, line)) {
    const auto fields = split_csv_line(line);
    ASSERT_EQ(fields.size(), header.size()) << line;
    const auto run = read_lines(kFixture / "runs" / fields[0] / "metrics.jsonl");
    const auto val = last_logged(run, "val_loss");
    EXPECT_EQ(fields[5].empty(), !val.has_value()) << fields[0];
    for (std::size_t c = 6; c < header.size(); ++c) {
      const auto expected = last_logged(run, header[c]);
      if (!expected) {
        EXPECT_EQ(fields[c], "") << fields[0] << " " << header[c];
        continue;
      }
      ASSERT_FALSE(fields[c].empty()) << fields[0] << " " << header[c];
      EXPECT_NEAR(std::strtod(fields[c].c_str(), nullptr), *expected, 1e-8 * std::max(1.0, std::fabs(*expected)))
          << fields[0] << " " << header[c];
      ++compared;
    }
    ++rows;
  }
  EXPECT_EQ(rows, 7u);  // the index's runs, pending one included
  EXPECT_GT(compared, 1000u);
}

TEST(Report, ADivergedRunShowsItsStopReasonAndStep) {
  const Report report = build_report(kFixture);
  const auto it = std::find_if(report.runs.begin(), report.runs.end(), [](const RunData& r) { return r.name == "fp8-e4m3.seed2"; });
  ASSERT_NE(it, report.runs.end());
  std::string reason;
  std::int64_t step = -1;
  for (const json& e : read_lines(kFixture / "runs" / "fp8-e4m3.seed2" / "events.jsonl")) {
    if (e["event"] == "stop") {
      reason = e["reason"];
      step = e["step"];
    }
  }
  ASSERT_EQ(step, 17);
  EXPECT_TRUE(it->diverged());
  EXPECT_EQ(it->stop_step, step);
  EXPECT_EQ(it->status, reason);
  const std::string md = report_markdown(report);
  EXPECT_NE(md.find("| fp8-e4m3.seed2 | 17 | stop | " + reason), std::string::npos);
  const json data = page_data(report);
  const auto stop = std::find_if(data["events"].begin(), data["events"].end(), [](const json& e) { return e["kind"] == "stop"; });
  ASSERT_NE(stop, data["events"].end());
  EXPECT_EQ((*stop)["run"], "fp8-e4m3.seed2");
  EXPECT_EQ((*stop)["step"], 17);
}

TEST(Report, GroupsAverageTheirSeedsAndGapToTheBaselines) {
  const Report report = build_report(kFixture);
  std::map<std::string, const GroupSummary*> groups;
  for (const auto& g : report.groups) groups[g.name] = &g;
  ASSERT_EQ(groups.size(), 5u);
  const double hybrid = (*last_logged(kFixture / "runs" / "fp8-hybrid.seed1", "val_loss") +
                         *last_logged(kFixture / "runs" / "fp8-hybrid.seed2", "val_loss")) / 2;
  const double bf16 = *last_logged(kFixture / "runs" / "bf16.seed1", "val_loss");
  const double fp32 = *last_logged(kFixture / "runs" / "fp32.seed1", "val_loss");
  EXPECT_DOUBLE_EQ(*groups["fp8-hybrid"]->val_loss_mean(), hybrid);
  EXPECT_EQ(groups["fp8-hybrid"]->bf16_baseline, "bf16");
  EXPECT_EQ(groups["fp8-hybrid"]->fp32_baseline, "fp32");
  EXPECT_NEAR(*groups["fp8-hybrid"]->gap_bf16_pct, 100 * (hybrid - bf16) / bf16, 1e-12);
  EXPECT_NEAR(*groups["fp8-hybrid"]->gap_fp32_pct, 100 * (hybrid - fp32) / fp32, 1e-12);
  // The diverged seed is counted as diverged, not averaged into the final loss.
  EXPECT_EQ(groups["fp8-e4m3"]->diverged, 1);
  EXPECT_DOUBLE_EQ(*groups["fp8-e4m3"]->val_loss_mean(), *last_logged(kFixture / "runs" / "fp8-e4m3.seed1", "val_loss"));
  // A run listed in the index but not started yet is pending, with no final loss.
  EXPECT_EQ(report.runs.back().status, "pending");
  EXPECT_FALSE(groups["fp8-e5m2"]->val_loss_mean());
}

// The terminal summary: every group but the bf16 baseline, its loss and gap recomputed from the runs.
TEST(TextSummary, OneLinePerRecipeWithItsGapToBf16) {
  const std::string text = text_summary(build_report(kFixture));
  std::map<std::string, std::string> lines;
  std::vector<std::string> verdicts;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("verdict ", 0) == 0) {
      verdicts.push_back(line);
    } else {
      lines[line.substr(0, line.find(' '))] = line;
    }
  }
  // The fixture's one criterion (within 2% of bf16, 1 seed, 30 steps), for each group but bf16.
  ASSERT_EQ(verdicts.size(), 4u) << text;
  EXPECT_EQ(verdicts[2], "verdict fp8-e4m3: within 2% of bf16: fail (1 of 2 runs diverged)");
  EXPECT_EQ(verdicts[3], "verdict fp8-e5m2: within 2% of bf16: inconclusive (0 paired seeds, 1 needed (an interval needs 2))");
  EXPECT_EQ(lines.size(), 4u) << text;
  EXPECT_EQ(lines.count("bf16"), 0u) << text;
  const double hybrid = (*last_logged(kFixture / "runs" / "fp8-hybrid.seed1", "val_loss") +
                         *last_logged(kFixture / "runs" / "fp8-hybrid.seed2", "val_loss")) / 2;
  const double bf16 = *last_logged(kFixture / "runs" / "bf16.seed1", "val_loss");
  const double seed1 = *last_logged(kFixture / "runs" / "fp8-hybrid.seed1", "val_loss");
  // Two seeds: the 95% half width is t(0.975, 1 dof) = 12.706 times sd / √2 = |a − b| / 2.
  const double half_width = 12.7062047 * std::fabs(seed1 - hybrid);
  char expected[256];
  std::snprintf(expected, sizeof expected,
                "val loss %.4f ± %.4f (2 seeds)  %+.2f%% vs bf16 (%.4f)  1 paired seed: no interval (unpaired: "
                "fp8-hybrid.seed2)",
                hybrid, half_width, 100 * (hybrid - bf16) / bf16, bf16);
  EXPECT_NE(lines["fp8-hybrid"].find(expected), std::string::npos) << lines["fp8-hybrid"];
  EXPECT_NE(lines["fp8-e4m3"].find("(1 of 2 runs diverged)"), std::string::npos) << lines["fp8-e4m3"];
  EXPECT_NE(lines["fp8-e5m2"].find("val loss -  no val loss yet"), std::string::npos) << lines["fp8-e5m2"];
}

TEST(Report, WarningsAreEveryWarningEventInOrder) {
  const Report report = build_report(kFixture);
  for (const RunData& run : report.runs) {
    std::vector<std::pair<std::int64_t, std::string>> expected, got;
    for (const json& e : read_lines(run.dir / "events.jsonl")) {
      if (e["event"] == "warning") expected.emplace_back(e["step"], e["where"]);
    }
    for (const Warning& w : run.warnings) got.emplace_back(w.step, w.where);
    EXPECT_EQ(got, expected) << run.name;
  }
}

TEST(Report, SearchesKeepTheirBracketAndProbes) {
  const Report report = build_report(kFixture);
  ASSERT_EQ(report.index.searches.size(), 1u);
  const Search& s = report.index.searches[0];
  EXPECT_EQ(s.group, "fp8-hybrid");
  ASSERT_TRUE(s.bracket);
  EXPECT_EQ(s.bracket->first, 0.003);
  EXPECT_EQ(s.bracket->second, 30.0);
  ASSERT_EQ(s.probes.size(), 2u);
  EXPECT_TRUE(s.probes[1].diverged);
}

TEST(Report, ASingleRunDirectoryIsAReportOfOneRun) {
  const Report report = build_report(kFixture / "runs" / "fp8-hybrid.seed1");
  ASSERT_EQ(report.runs.size(), 1u);
  EXPECT_TRUE(report.index.single_run);
  EXPECT_EQ(report.runs[0].final_value("loss"), last_logged(kFixture / "runs" / "fp8-hybrid.seed1", "loss"));
}

}  // namespace
}  // namespace altgrad::report

namespace altgrad::report {
namespace {

// The value each seed logged at `step` under `key`, recomputed from metrics.jsonl.
std::vector<double> seed_values(const std::vector<std::string>& runs, const std::string& key, double step) {
  std::vector<double> values;
  const json::json_pointer pointer("/" + key);
  static std::map<std::string, std::vector<json>> cache;
  for (const auto& run : runs) {
    if (!cache.count(run)) cache[run] = read_lines(kFixture / "runs" / run / "metrics.jsonl");
    for (const json& line : cache[run]) {
      if (line["step"].get<double>() == step && line.contains(pointer)) values.push_back(line[pointer].get<double>());
    }
  }
  return values;
}

double rounded4(double v) { return std::strtod(([&] { char b[32]; std::snprintf(b, sizeof b, "%.4g", v); return std::string(b); })().c_str(), nullptr); }

TEST(PageData, CurvesAreTheSeedsMeanAndMinMaxAtEachStep) {
  const json data = page_data(build_report(kFixture));
  const json& band = data["curves"]["loss"]["fp8-hybrid"];
  ASSERT_EQ(band["x"].size(), 30u);  // 30 steps fit the budget whole
  for (std::size_t i = 0; i < band["x"].size(); ++i) {
    const auto v = seed_values({"fp8-hybrid.seed1", "fp8-hybrid.seed2"}, "loss", band["x"][i].get<double>());
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(band["mean"][i].get<double>(), rounded4((v[0] + v[1]) / 2));
    EXPECT_EQ(band["lo"][i].get<double>(), rounded4(std::min(v[0], v[1])));
    EXPECT_EQ(band["hi"][i].get<double>(), rounded4(std::max(v[0], v[1])));
  }
}

TEST(PageData, DiagnosticChartsHoldOneLinePerPointOnSharedSteps) {
  const json data = page_data(build_report(kFixture));
  const json& chart = data["charts"]["quant/*/underflow_pct"]["fp8-hybrid"];
  const json first = read_lines(kFixture / "runs" / "fp8-hybrid.seed1" / "metrics.jsonl").front();
  EXPECT_EQ(chart["lines"].size(), first["quant"].size());
  for (const auto& [point, y] : chart["lines"].items()) {
    ASSERT_EQ(y.size(), chart["x"].size());
    for (std::size_t i = 0; i < y.size(); ++i) {
      const auto v = seed_values({"fp8-hybrid.seed1", "fp8-hybrid.seed2"}, "quant/" + point + "/underflow_pct",
                                 chart["x"][i].get<double>());
      EXPECT_EQ(y[i].get<double>(), rounded4((v[0] + v[1]) / 2)) << point;
    }
  }
}

// The parallel view: a quantization statistic is its worst point's final value, a geometry
// diagnostic the mean over the weight tensors; a histogram's bins get no axis.
TEST(PageData, FinalsSummarizeEachPointChartByItsRule) {
  const fs::path dir = fs::temp_directory_path() / ("altgrad_report_finals_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "metrics.jsonl");
    out << R"({"step": 1, "loss": 5.0, "quant": {"a:act": {"overflow_pct": 9.0}, "b:act": {"overflow_pct": 1.0}},)"
        << R"( "diag": {"geometry": {"w.a": {"update_underflow": 0.9, "log2_stiffness": {"-9": 4}}, "w.b": {"update_underflow": 0.5}}}})"
        << "\n";
    out << R"({"step": 2, "loss": 4.0, "quant": {"a:act": {"overflow_pct": 2.0}, "b:act": {"overflow_pct": 3.0}},)"
        << R"( "diag": {"geometry": {"w.a": {"update_underflow": 0.25, "log2_stiffness": {"-9": 4}}, "w.b": {"update_underflow": 0.75}}}})"
        << "\n";
  }
  const json data = page_data(build_report(dir));
  fs::remove_all(dir);
  const json& dims = data["finals"]["dims"];
  const json& values = data["finals"]["rows"][0]["values"];
  std::map<std::string, double> final_of;
  for (std::size_t i = 0; i < dims.size(); ++i) final_of[dims[i].get<std::string>()] = values[i].get<double>();
  EXPECT_EQ(final_of.size(), 3u) << dims.dump();
  EXPECT_EQ(final_of["loss"], 4.0);
  EXPECT_EQ(final_of["max overflow_pct"], 3.0);
  EXPECT_EQ(final_of["mean update_underflow"], 0.5);
}

TEST(PageData, LongSeriesAreDownsampledKeepingTheirSpike) {
  const fs::path dir = fs::temp_directory_path() / ("altgrad_report_long_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "metrics.jsonl");
    for (int step = 1; step <= 5000; ++step) {
      const double underflow = step == 3333 ? 97.0 : 1.0 + (step % 7);
      out << json{{"step", step}, {"loss", step == 2222 ? 50.0 : 5.0 - step * 1e-4},
                  {"quant", {{"a.b:act", {{"underflow_pct", underflow}}}, {"a.c:act", {{"underflow_pct", 2.0}}}}}}.dump() << "\n";
    }
  }
  const json data = page_data(build_report(dir));
  fs::remove_all(dir);
  const json& loss = data["curves"]["loss"].begin().value();
  EXPECT_LE(loss["x"].size(), kCurvePoints);
  EXPECT_NE(std::find(loss["x"].begin(), loss["x"].end(), 2222.0), loss["x"].end());
  EXPECT_NE(std::find(loss["mean"].begin(), loss["mean"].end(), 50.0), loss["mean"].end());
  const json& chart = data["charts"]["quant/*/underflow_pct"].begin().value();
  EXPECT_LE(chart["x"].size(), kDiagnosticPoints + 2);
  const auto at = std::find(chart["x"].begin(), chart["x"].end(), 3333.0);
  ASSERT_NE(at, chart["x"].end());
  EXPECT_EQ(chart["lines"]["a.b:act"][at - chart["x"].begin()], 97.0);
}

}  // namespace
}  // namespace altgrad::report
