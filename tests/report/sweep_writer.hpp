#pragma once
// Sweep directories written with chosen final losses, [quant] tables and events, in the layout
// `altgrad sweep` leaves (docs/experiments.md, "The sweep directory"), as sweep_files.py writes
// them for the Python checks: for the cases the fixture's real runs do not have. Its names are in
// a namespace of their own: report_tests compiles its files as one (tests/CMakeLists.txt).
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace altgrad::report::sweep_writer {

struct SweepRun {
  std::string group;
  std::int64_t seed = 1;
  std::optional<double> val_loss;  // its final value; none: the run diverged at step 15
  std::string preset = "bf16";
  // More keys of its recipe, [quant] key and TOML value ({"act.format", "\"e3m4\""}); they are its
  // index.json settings too, as JSON values.
  std::vector<std::pair<std::string, std::string>> quant = {};
  std::vector<nlohmann::json> events = {};  // before its end or stop event
  bool pending = false;                     // in the index, with no directory yet
  std::string name() const { return group + ".seed" + std::to_string(seed); }
};

inline void write_run(const std::filesystem::path& dir, const SweepRun& run) {
  std::filesystem::create_directories(dir);
  std::ofstream config(dir / "config.toml");
  config << "seed = " << run.seed << "\n[quant]\npreset = \"" << run.preset << "\"\n";
  for (const auto& [key, value] : run.quant) config << key << " = " << value << "\n";
  std::ofstream metrics(dir / "metrics.jsonl");
  metrics << nlohmann::json{{"step", 10}, {"loss", 2.5}, {"val_loss", 2.5}}.dump() << "\n";
  if (run.val_loss) metrics << nlohmann::json{{"step", 20}, {"loss", *run.val_loss}, {"val_loss", *run.val_loss}}.dump() << "\n";
  std::ofstream events(dir / "events.jsonl");
  events << nlohmann::json{{"event", "start"}, {"step", 0}}.dump() << "\n";
  for (const nlohmann::json& e : run.events) events << e.dump() << "\n";
  const nlohmann::json last = run.val_loss ? nlohmann::json{{"event", "end"}, {"reason", "completed"}, {"step", 20}}
                                           : nlohmann::json{{"event", "stop"}, {"reason", "non-finite loss"}, {"step", 15}};
  events << last.dump() << "\n";
}

// A directory under the system's temporary one, named after the running test, removed at the end.
class TempSweep {
 public:
  TempSweep()
      : path_(std::filesystem::temp_directory_path() /
              ("altgrad_sweep_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(path_);
  }
  ~TempSweep() { std::filesystem::remove_all(path_); }
  TempSweep(const TempSweep&) = delete;
  TempSweep& operator=(const TempSweep&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // criteria: index.json's, e.g. {{"baseline", "bf16"}, {"max_gap_pct", 2}, {"min_seeds", 3}, {"min_steps", 0}}.
  // (A vector, not a json: a braced list of one json would be copied, not made an array.)
  void write(const std::vector<SweepRun>& runs, const std::vector<nlohmann::json>& criteria = {}) const {
    nlohmann::json entries = nlohmann::json::array();
    for (const SweepRun& run : runs) {
      nlohmann::json settings = {{"quant.preset", run.preset}, {"seed", run.seed}};
      for (const auto& [key, value] : run.quant) settings["quant." + key] = nlohmann::json::parse(value);
      entries.push_back({{"name", run.name()}, {"dir", "runs/" + run.name()}, {"group", run.group}, {"seed", run.seed},
                         {"settings", settings}});
      if (!run.pending) write_run(path_ / "runs" / run.name(), run);
    }
    std::filesystem::create_directories(path_);
    std::ofstream(path_ / "index.json") << nlohmann::json{{"format", "altgrad-sweep/1"}, {"base", "tiny.toml"},
                                                          {"runs", entries}, {"searches", nlohmann::json::array()},
                                                          {"criteria", nlohmann::json(criteria)}}.dump(2);
  }

 private:
  std::filesystem::path path_;
};

// One criterion of index.json.
inline nlohmann::json criterion(const std::string& baseline, double max_gap_pct, int min_seeds = 3) {
  return {{"baseline", baseline}, {"max_gap_pct", max_gap_pct}, {"min_seeds", min_seeds}, {"min_steps", 0}};
}

// The rows of a Markdown table under `heading` ("## Groups"), split into cells, header row first.
inline std::vector<std::vector<std::string>> markdown_table(const std::string& md, const std::string& heading) {
  std::vector<std::vector<std::string>> rows;
  const auto at = md.find(heading + "\n");
  if (at == std::string::npos) return rows;
  std::size_t line_start = md.find("\n|", at);
  while (line_start != std::string::npos && md.compare(line_start, 2, "\n|") == 0) {
    const std::size_t end = md.find('\n', line_start + 1);
    const std::string line = md.substr(line_start + 1, end - line_start - 1);
    line_start = end;
    if (line.rfind("|---", 0) == 0) continue;
    std::vector<std::string> cells;
    for (std::size_t from = 2; from < line.size();) {
      const std::size_t bar = line.find(" |", from);
      cells.push_back(line.substr(from, bar - from));
      from = bar + 3;
    }
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace altgrad::report::sweep_writer
