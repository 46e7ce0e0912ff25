// Bad input gets an error naming the file, line or key; report files are replaced whole.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "report/report_model.hpp"
#include "report/write_report.hpp"

namespace altgrad::report {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("altgrad_report_test_" + std::to_string(::getpid()) + "_" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string error_of(const fs::path& dir) {
  try {
    build_report(dir);
  } catch (const ReportError& e) {
    return e.what();
  }
  return "";
}

TEST(ReportInput, ADirectoryThatIsNeitherSweepNorRunIsRefused) {
  TempDir dir;
  EXPECT_NE(error_of(dir.path).find("neither a sweep"), std::string::npos);
}

TEST(ReportInput, AnIndexOfAnotherFormatIsRefusedByKey) {
  TempDir dir;
  write(dir.path / "index.json", R"({"format": "altgrad-sweep/2", "runs": []})");
  EXPECT_NE(error_of(dir.path).find("key \"format\""), std::string::npos);
  write(dir.path / "index.json", R"({"format": "altgrad-sweep/1", "runs": [{"name": "a", "dir": "runs/a", "seed": 1}]})");
  const std::string error = error_of(dir.path);
  EXPECT_NE(error.find("runs[0]"), std::string::npos) << error;
  EXPECT_NE(error.find("key \"group\""), std::string::npos) << error;
}

TEST(ReportInput, AMalformedMetricsLineIsRefusedWithItsLineButATornLastLineIsSkipped) {
  TempDir dir;
  write(dir.path / "metrics.jsonl", "{\"step\": 1, \"loss\": 2.0}\n{\"step\": 2, \"loss\": 1.5}\n{\"step\": 3, \"lo");
  const Report report = build_report(dir.path);
  EXPECT_EQ(report.runs[0].final_value("loss"), 1.5);
  EXPECT_EQ(report.runs[0].status, "running");
  write(dir.path / "metrics.jsonl", "{\"step\": 1, \"loss\": 2.0}\nnot json\n{\"step\": 3, \"loss\": 1.0}\n");
  EXPECT_NE(error_of(dir.path).find("metrics.jsonl:2"), std::string::npos);
  write(dir.path / "metrics.jsonl", "{\"loss\": 2.0}\n{\"step\": 2, \"loss\": 1.0}\n");
  EXPECT_NE(error_of(dir.path).find("metrics.jsonl:1: key \"step\""), std::string::npos);
}

TEST(ReportInput, AWarmStartsCurvesContinueItsSourcesStepsAndItsOwnCountsStay) {
  TempDir dir;
  write(dir.path / "metrics.jsonl", "{\"step\": 10, \"loss\": 2.0}\n{\"step\": 20, \"loss\": 1.5}\n");
  write(dir.path / "events.jsonl",
        "{\"event\": \"start\", \"init_from\": {\"checkpoint\": \"x/step_640\", \"step\": 640}}\n"
        "{\"event\": \"phase\", \"step\": 15}\n"
        "{\"event\": \"warning\", \"step\": 12, \"kind\": \"overflow\"}\n");
  const Report report = build_report(dir.path);
  const RunData& run = report.runs[0];
  EXPECT_EQ(run.source_step, 640);
  EXPECT_EQ(run.series.at("loss").steps, (std::vector<double>{650.0, 660.0}));
  EXPECT_EQ(run.phase_switches, (std::vector<std::int64_t>{655}));
  EXPECT_EQ(run.warnings.at(0).step, 12);
  EXPECT_EQ(run.last_step, 20);
}

TEST(WriteReport, WritesThreeFilesAndLeavesNoTemporaries) {
  TempDir dir;
  write(dir.path / "run" / "metrics.jsonl", "{\"step\": 1, \"loss\": 2.0}\n");
  const ReportFiles files = write_report(dir.path / "run", dir.path / "out" / "page.html");
  EXPECT_EQ(files.csv, dir.path / "out" / "summary.csv");
  std::size_t count = 0;
  for (const auto& entry : fs::directory_iterator(dir.path / "out")) {
    EXPECT_NE(entry.path().filename().string()[0], '.') << entry.path();
    ++count;
  }
  EXPECT_EQ(count, 3u);
  std::ifstream html(files.html);
  const std::string text((std::istreambuf_iterator<char>(html)), {});
  EXPECT_NE(text.find("</html>"), std::string::npos);
}

TEST(WriteReport, AMissingEChartsFileNamesItAndTheSetupCommand) {
  TempDir dir;
  write(dir.path / "run" / "metrics.jsonl", "{\"step\": 1, \"loss\": 2.0}\n");
  const char* saved = std::getenv("ALTGRAD_ECHARTS");
  const std::string previous = saved ? saved : "";
  ::setenv("ALTGRAD_ECHARTS", (dir.path / "nowhere" / "echarts.min.js").c_str(), 1);
  std::string error;
  try {
    write_report(dir.path / "run");
  } catch (const ReportError& e) {
    error = e.what();
  }
  if (saved) ::setenv("ALTGRAD_ECHARTS", previous.c_str(), 1); else ::unsetenv("ALTGRAD_ECHARTS");
  EXPECT_NE(error.find("nowhere/echarts.min.js"), std::string::npos) << error;
  EXPECT_NE(error.find("scripts/setup_echarts.sh"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dir.path / "run" / "report.html"));
}

}  // namespace
}  // namespace altgrad::report
