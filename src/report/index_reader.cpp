#include "report/index_reader.hpp"

#include <fstream>

#include "io/run_directory.hpp"
#include "report/run_data.hpp"

namespace altgrad::report {
namespace {

using nlohmann::json;

const json& require(const json& object, const std::string& key, const std::string& where, json::value_t type) {
  const auto it = object.find(key);
  const bool number_ok = type == json::value_t::number_float && it != object.end() && it->is_number();
  if (it == object.end() || (it->type() != type && !number_ok &&
                             !(type == json::value_t::number_integer && it->is_number_unsigned()))) {
    throw ReportError(where + ": key \"" + key + "\" is missing or has the wrong type");
  }
  return *it;
}

RunEntry parse_run(const json& object, const std::filesystem::path& dir, const std::string& where) {
  if (!object.is_object()) throw ReportError(where + ": not an object");
  RunEntry run;
  run.name = require(object, "name", where, json::value_t::string).get<std::string>();
  run.dir = dir / require(object, "dir", where, json::value_t::string).get<std::string>();
  run.group = require(object, "group", where, json::value_t::string).get<std::string>();
  run.seed = require(object, "seed", where, json::value_t::number_integer).get<std::int64_t>();
  if (object.contains("settings")) run.settings = object["settings"];
  return run;
}

Search parse_search(const json& object, const std::string& where) {
  if (!object.is_object()) throw ReportError(where + ": not an object");
  Search search;
  search.kind = require(object, "kind", where, json::value_t::string).get<std::string>();
  search.group = require(object, "group", where, json::value_t::string).get<std::string>();
  search.key = object.value("key", "");
  if (const auto it = object.find("seed"); it != object.end()) {
    search.seed = require(object, "seed", where, json::value_t::number_integer).get<std::int64_t>();
  }
  if (const auto it = object.find("bracket"); it != object.end() && it->is_array() && it->size() == 2 &&
                                              (*it)[0].is_number() && (*it)[1].is_number()) {
    search.bracket = std::make_pair((*it)[0].get<double>(), (*it)[1].get<double>());
  }
  if (const auto it = object.find("probes"); it != object.end() && it->is_array()) {
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& p = (*it)[i];
      const std::string at = where + ".probes[" + std::to_string(i) + "]";
      search.probes.push_back({require(p, "value", at, json::value_t::number_float).get<double>(), p.value("run", ""),
                               p.value("diverged", false), p.value("reason", "")});
    }
  }
  return search;
}

Criterion parse_criterion(const json& object, const std::string& where) {
  if (!object.is_object()) throw ReportError(where + ": not an object");
  Criterion c;
  c.baseline = require(object, "baseline", where, json::value_t::string).get<std::string>();
  c.max_gap_pct = require(object, "max_gap_pct", where, json::value_t::number_float).get<double>();
  c.min_seeds = require(object, "min_seeds", where, json::value_t::number_integer).get<std::int64_t>();
  c.min_steps = require(object, "min_steps", where, json::value_t::number_integer).get<std::int64_t>();
  if (object.contains("groups")) {
    const json& groups = require(object, "groups", where, json::value_t::array);
    for (std::size_t i = 0; i < groups.size(); ++i) {
      if (!groups[i].is_string()) throw ReportError(where + ".groups[" + std::to_string(i) + "]: not a group name (a string)");
      c.groups.push_back(groups[i].get<std::string>());
    }
  }
  return c;
}

}  // namespace

SweepIndex load_sweep_index(const std::filesystem::path& dir) {
  SweepIndex index;
  const auto path = dir / io::sweep_directory::kIndex;
  if (!std::filesystem::exists(path)) {
    if (!std::filesystem::exists(dir / io::run_directory::kMetrics) && !std::filesystem::exists(dir / io::run_directory::kConfig)) {
      throw ReportError(dir.string() + ": neither a sweep (no index.json) nor a run (no metrics.jsonl or config.toml)");
    }
    index.single_run = true;
    auto normal = std::filesystem::absolute(dir).lexically_normal();
    if (normal.filename().empty()) normal = normal.parent_path();  // "runs/a/" names run "a"
    const std::string run_name = normal.filename().string();
    index.runs.push_back({run_name, dir, run_name, 0, json::object()});
    return index;
  }
  std::ifstream in(path);
  const json root = json::parse(in, nullptr, false);
  if (root.is_discarded() || !root.is_object()) throw ReportError(path.string() + ": not a JSON object");
  const std::string format = require(root, "format", path.string(), json::value_t::string).get<std::string>();
  if (format != "altgrad-sweep/1") {
    throw ReportError(path.string() + ": key \"format\" is \"" + format + "\", expected \"altgrad-sweep/1\"");
  }
  index.base = root.value("base", "");
  // Named, not temporaries: GCC 13's -Wdangling-reference warns of a reference returned by a call
  // that was given temporaries, whatever the call returns a reference to.
  const std::string runs_key(io::sweep_directory::kRunsKey), where = path.string();
  const json& runs = require(root, runs_key, where, json::value_t::array);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    index.runs.push_back(parse_run(runs[i], dir, path.string() + ": runs[" + std::to_string(i) + "]"));
  }
  if (const auto it = root.find("searches"); it != root.end() && it->is_array()) {
    for (std::size_t i = 0; i < it->size(); ++i) {
      index.searches.push_back(parse_search((*it)[i], path.string() + ": searches[" + std::to_string(i) + "]"));
    }
  }
  if (const auto it = root.find("criteria"); it != root.end() && it->is_array()) {
    for (std::size_t i = 0; i < it->size(); ++i) {
      index.criteria.push_back(parse_criterion((*it)[i], path.string() + ": criteria[" + std::to_string(i) + "]"));
    }
  }
  return index;
}

}  // namespace altgrad::report
