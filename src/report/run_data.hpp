#pragma once
// One run directory as the report sees it: every numeric metrics.jsonl value as a series over
// steps (keys flattened to paths, e.g. "quant/h.0.mlp.c_fc:act/overflow_pct"), the log2 weight
// histograms, the warnings, start-up events and stop reason of events.jsonl, and the quantization
// preset of config.toml. Reads only the files `altgrad train --out` writes; never the trainer's code.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace altgrad::report {

// Unreadable or malformed input (names the file, line and key).
class ReportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Series {
  std::vector<double> steps;
  std::vector<double> values;
};

// A metrics object holding "counts" (an array) with siblings "lo" and "hi": counts[i] is the number
// of values whose log2 magnitude falls in [lo + i, lo + i + 1).
struct Histogram {
  double lo = 0.0;
  double hi = 0.0;
  std::vector<double> steps;
  std::vector<std::vector<double>> counts;  // one row per step
};

struct Warning {
  std::int64_t step = 0;
  std::string kind;
  std::string where;
  double value = 0.0;
  double threshold = 0.0;
  std::string message;
};

// A statistic past its threshold that the trainer expects at start-up, not a warning: delayed
// scaling's first step, whose scale is 1 for want of an amax history (kind "no_history").
struct StartUpEvent {
  std::int64_t step = 0;
  std::string kind;
  std::string point;
  std::string statistic;  // "overflow", "underflow", ...
  double value = 0.0;
  std::string message;
};

// The end event's cost of the result (docs/quantization.md, "Cost of a result").
struct RunCost {
  bool reached = false;                 // target_loss reached (false also without a target)
  std::optional<double> tokens, seconds;  // to the target, when reached
  double train_seconds = 0;
  double peak_rss_mib = 0;
  double checkpoint_mib = 0;
};

struct RunData {
  std::string name;
  std::filesystem::path dir;
  std::string preset;  // config.toml's quant.preset ("fp32" when it has none, "" without config.toml)
  // Whether config.toml's [quant] sets nothing but the preset: the run is that preset as it stands,
  // not a recipe built on it (e3m4 is fp8-hybrid with other formats).
  bool preset_only = true;
  std::string range_fit_format = "e1m6";  // config.toml's range_fit_format
  std::map<std::string, Series> series;
  std::map<std::string, Histogram> histograms;
  std::vector<Warning> warnings;
  // Kept apart from the warnings: neither an early warning nor counted as one.
  std::vector<StartUpEvent> start_up;
  // "completed", the stop reason, "running" (metrics but no end event) or "pending" (no metrics).
  std::string status = "pending";
  std::optional<std::int64_t> stop_step;  // the step of a stop event (a diverged run)
  std::vector<std::int64_t> phase_switches;  // the steps after which a precision schedule switched phase
  std::optional<RunCost> cost;               // from the end event
  std::int64_t last_step = 0;
  // A warm start's source checkpoint step (its start event's init_from.step), 0 otherwise. Its
  // curves and phase switches are drawn from there on, continuing the source's step axis; warnings,
  // last_step and stop_step count the run's own steps, as its events.jsonl does.
  std::int64_t source_step = 0;

  bool diverged() const { return stop_step.has_value(); }
  // The last logged value of `key`, if it was ever logged.
  std::optional<double> final_value(const std::string& key) const;
  // The range fit of the last profiled step, point by point, best fit first: by overflow_pct +
  // flush_pct, then by name (docs/quantization.md, "Value profiles").
  struct PointFit {
    std::string point;
    double overflow_pct = 0, subnormal_pct = 0, flush_pct = 0;
  };
  std::vector<PointFit> range_fit_ranking() const;
};

// Reads `dir`; a missing directory or one without metrics is a pending run, not an error.
RunData load_run(const std::filesystem::path& dir, const std::string& name);

}  // namespace altgrad::report
