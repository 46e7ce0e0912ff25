#include "report/run_data.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <toml++/toml.h>

#include "io/run_directory.hpp"

namespace altgrad::report {
namespace {

using nlohmann::json;

// Calls f(line_number, object) for each non-empty line. A torn last line (a run killed mid-write)
// is skipped; a malformed line anywhere else is an error.
template <class F>
void for_each_json_line(const std::filesystem::path& path, F&& f) {
  std::ifstream in(path);
  if (!in) return;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    json object = json::parse(lines[i], nullptr, false);
    if (object.is_discarded() || !object.is_object()) {
      if (i + 1 == lines.size()) return;
      throw ReportError(path.string() + ":" + std::to_string(i + 1) + ": not a JSON object");
    }
    f(i + 1, object);
  }
}

bool is_histogram(const json& object) {
  return object.contains("counts") && object["counts"].is_array() && object.contains("lo") &&
         object["lo"].is_number() && object.contains("hi") && object["hi"].is_number();
}

void add_point(RunData& run, const std::string& key, double step, double value) {
  Series& s = run.series[key];
  s.steps.push_back(step);
  s.values.push_back(value);
}

void add_histogram(RunData& run, const std::string& key, double step, const json& object) {
  Histogram& h = run.histograms[key];
  h.lo = object["lo"].get<double>();
  h.hi = object["hi"].get<double>();
  std::vector<double> row;
  for (const json& c : object["counts"]) row.push_back(c.is_number() ? c.get<double>() : 0.0);
  h.steps.push_back(step);
  h.counts.push_back(std::move(row));
}

// Every number under `value` becomes a series named by its path; arrays of numbers are indexed
// ("per_head/0"); null (a non-finite value in JSON) and strings are skipped.
void flatten(RunData& run, const std::string& key, double step, const json& value) {
  if (value.is_number()) {
    add_point(run, key, step, value.get<double>());
  } else if (value.is_object()) {
    if (is_histogram(value)) add_histogram(run, key, step, value);
    for (const auto& [name, child] : value.items()) {
      if (is_histogram(value) && (name == "counts" || name == "lo" || name == "hi")) continue;
      flatten(run, key.empty() ? name : key + "/" + name, step, child);
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) flatten(run, key + "/" + std::to_string(i), step, value[i]);
  }
}

void read_metrics(RunData& run) {
  const auto path = run.dir / io::run_directory::kMetrics;
  for_each_json_line(path, [&](std::size_t line, json& object) {
    if (!object.contains("step") || !object["step"].is_number_integer()) {
      throw ReportError(path.string() + ":" + std::to_string(line) + ": key \"step\" is missing or not an integer");
    }
    const auto step = object["step"].get<std::int64_t>();
    object.erase("step");
    flatten(run, "", static_cast<double>(step), object);
    run.last_step = step;
    if (run.status == "pending") run.status = "running";
  });
}

template <class T>
T get_or(const json& object, std::string_view key, T fallback) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  return it->get<T>();
}

Warning warning_of(const json& object) {
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  return {get_or<std::int64_t>(object, "step", 0), get_or<std::string>(object, "kind", ""),
          get_or<std::string>(object, "where", ""), get_or<double>(object, "value", kNone),
          get_or<double>(object, "threshold", kNone), get_or<std::string>(object, "message", "")};
}

StartUpEvent start_up_of(const json& object) {
  return {get_or<std::int64_t>(object, "step", 0), get_or<std::string>(object, "kind", ""),
          get_or<std::string>(object, "where", ""),
          get_or<std::string>(object, "statistic", ""),
          get_or<double>(object, "value", std::numeric_limits<double>::quiet_NaN()),
          get_or<std::string>(object, "message", "")};
}

void read_events(RunData& run) {
  const auto path = run.dir / io::run_directory::kEvents;
  for_each_json_line(path, [&](std::size_t line, const json& object) {
    const std::string event = get_or<std::string>(object, io::run_directory::kEventKey, "");
    try {
      if (event == "warning") {
        run.warnings.push_back(warning_of(object));
      } else if (event == io::run_directory::kStartUpEvent) {
        run.start_up.push_back(start_up_of(object));
      } else if (event == "phase") {
        const auto step = get_or<std::int64_t>(object, "step", 0);
        // A run resumed at a switch logs it again.
        if (run.phase_switches.empty() || run.phase_switches.back() < step) run.phase_switches.push_back(step);
      } else if (event == io::run_directory::kStopEvent) {
        run.stop_step = get_or<std::int64_t>(object, "step", 0);
        run.status = get_or<std::string>(object, io::run_directory::kReasonKey, "stopped");
      } else if (event == io::run_directory::kEndEvent) {
        run.status = get_or<std::string>(object, io::run_directory::kReasonKey, std::string(io::run_directory::kCompleted));
        if (const auto cost = object.find("cost"); cost != object.end() && cost->is_object()) {
          const auto number = [&](const char* key) -> std::optional<double> {
            const auto v = cost->find(key);
            return v != cost->end() && v->is_number() ? std::optional(v->get<double>()) : std::nullopt;
          };
          constexpr double kMiB = 1024.0 * 1024.0;
          run.cost = RunCost{get_or<bool>(*cost, "reached", false), number("tokens"), number("seconds"),
                             number("train_seconds").value_or(0), number("peak_rss_bytes").value_or(0) / kMiB,
                             number("checkpoint_bytes").value_or(0) / kMiB};
        }
      } else if (event == "start" || event == "resume") {
        // A resumed run is running again until its next end event.
        if (run.status != "pending") run.status = "running";
        run.stop_step.reset();
        if (const auto source = object.find("init_from"); source != object.end() && source->is_object()) {
          run.source_step = get_or<std::int64_t>(*source, "step", 0);
        }
      }
    } catch (const json::exception& e) {
      throw ReportError(path.string() + ":" + std::to_string(line) + ": event \"" + event + "\": " + e.what());
    }
  });
}

void read_preset(RunData& run) {
  const auto path = run.dir / io::run_directory::kConfig;
  if (!std::filesystem::exists(path)) return;  // pending: unknown preset
  run.preset = "fp32";
  try {
    const toml::table config = toml::parse_file(path.string());
    if (const auto preset = config["quant"]["preset"].value<std::string>()) run.preset = *preset;
    if (const toml::table* quant = config["quant"].as_table()) {
      for (const auto& [key, value] : *quant) run.preset_only = run.preset_only && key.str() == "preset";
    }
    if (const auto candidate = config["range_fit_format"].value<std::string>()) run.range_fit_format = *candidate;
  } catch (const toml::parse_error& e) {
    throw ReportError(path.string() + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
}

// A warm start's curves continue its source's: every step a chart draws moves by the source's step.
void shift_to_source_steps(RunData& run) {
  const auto offset = static_cast<double>(run.source_step);
  if (offset == 0) return;
  for (auto& [key, s] : run.series) {
    for (double& step : s.steps) step += offset;
  }
  for (auto& [key, h] : run.histograms) {
    for (double& step : h.steps) step += offset;
  }
  for (std::int64_t& step : run.phase_switches) step += run.source_step;
}

}  // namespace

std::optional<double> RunData::final_value(const std::string& key) const {
  const auto it = series.find(key);
  if (it == series.end() || it->second.values.empty()) return std::nullopt;
  return it->second.values.back();
}

std::vector<RunData::PointFit> RunData::range_fit_ranking() const {
  static const std::string prefix = "diag/profile/", suffix = "/fit/overflow_pct";
  std::vector<PointFit> fits;
  for (const auto& [key, s] : series) {
    if (!key.starts_with(prefix) || !key.ends_with(suffix) || s.values.empty()) continue;
    const std::string point = key.substr(prefix.size(), key.size() - prefix.size() - suffix.size());
    const auto fit = [&](const char* stat) { return final_value(prefix + point + "/fit/" + stat).value_or(0.0); };
    fits.push_back({point, s.values.back(), fit("subnormal_pct"), fit("flush_pct")});
  }
  std::sort(fits.begin(), fits.end(), [](const PointFit& a, const PointFit& b) {
    const double lost_a = a.overflow_pct + a.flush_pct, lost_b = b.overflow_pct + b.flush_pct;
    return lost_a != lost_b ? lost_a < lost_b : a.point < b.point;
  });
  return fits;
}

RunData load_run(const std::filesystem::path& dir, const std::string& name) {
  RunData run;
  run.name = name;
  run.dir = dir;
  try {
    read_metrics(run);
    read_events(run);
  } catch (const json::exception& e) {
    throw ReportError(dir.string() + ": " + e.what());
  }
  read_preset(run);
  shift_to_source_steps(run);
  return run;
}

}  // namespace altgrad::report
