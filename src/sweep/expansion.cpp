#include "sweep/expansion.hpp"

#include <algorithm>
#include <map>

#include "recipe/recipe.hpp"
#include "io/run_directory.hpp"
#include "io/toml_literal.hpp"
#include "sweep/sweep_error.hpp"


namespace altgrad::sweep {
namespace {

// Stands for the generated config in parser messages, then is replaced by the line's origin.
constexpr std::string_view kGenerated = "<sweep-generated>";

std::string dotted_key(const std::string& key) {
  std::string text;
  std::size_t begin = 0;
  while (true) {
    const auto dot = key.find('.', begin);
    text += io::toml_string(key.substr(begin, dot - begin));
    if (dot == std::string::npos) return text;
    text += '.';
    begin = dot + 1;
  }
}

// Later settings of a key replace earlier ones; the order of first appearance is kept.
Settings merged(const Settings& base, const Settings& settings) {
  Settings all;
  std::map<std::string, std::size_t> position;
  for (const Settings* group : {&base, &settings}) {
    for (const Setting& s : *group) {
      if (const auto found = position.find(s.key); found != position.end()) {
        all[found->second] = s;
      } else {
        position.emplace(s.key, all.size());
        all.push_back(s);
      }
    }
  }
  return all;
}

// "<sweep-generated>:N" → the origin of line N, wherever the parser's message names a line.
std::string located(std::string message, const Settings& lines) {
  const std::string marker = std::string(kGenerated) + ":";
  for (auto at = message.find(marker); at != std::string::npos; at = message.find(marker, at)) {
    std::size_t end = at + marker.size();
    std::size_t line = 0;
    while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) line = line * 10 + (message[end++] - '0');
    const std::string origin = line >= 1 && line <= lines.size() ? lines[line - 1].origin : "the run's config";
    message.replace(at, end - at, origin);
    at += origin.size();
  }
  return message;
}

void check_names(const std::vector<PlannedRun>& runs) {
  std::map<std::string, const PlannedRun*> seen;
  for (const PlannedRun& run : runs) {
    const auto [found, inserted] = seen.emplace(run.name, &run);
    if (!inserted) {
      throw SweepError("two runs are both named '" + run.name + "': " + settings_json(found->second->settings).dump() +
                       " and " + settings_json(run.settings).dump() +
                       " (names are built from the chosen values, docs/experiments.md; give [[runs]] a name)");
    }
  }
}

}  // namespace

nlohmann::json settings_json(const Settings& settings) {
  nlohmann::json object = nlohmann::json::object();
  for (const Setting& s : settings) object[s.key] = s.value;
  return object;
}

config::TrainConfig run_config(const Settings& base, const Settings& settings, const std::string& run) {
  const Settings lines = merged(base, settings);
  std::string text;
  for (const Setting& s : lines) text += dotted_key(s.key) + " = " + s.literal + "\n";
  try {
    config::TrainConfig config = config::parse_config(text, kGenerated);
    recipe::resolve_schedule(config);  // the [quant] table's errors, as the trainer would raise them
    return config;
  } catch (const std::exception& e) {
    throw SweepError(located(e.what(), lines) + " (in run '" + run + "')");
  }
}

Settings probe_settings(const SweepSpec& spec, const Settings& group, double value) {
  Settings settings = group;
  const SearchSpec& s = *spec.search;
  settings.push_back({s.key, io::toml_float(value), value, s.origin});
  settings.push_back({"max_iters", std::to_string(s.steps), s.steps, s.origin});
  settings.push_back({"stop_loss_multiple", io::toml_float(s.loss_multiple), s.loss_multiple, s.origin});
  return settings;
}

namespace {

// Each criterion's baseline, and each group it judges, must be one of the groups the runs make; a
// criterion does not judge its own baseline.
void check_criteria(const SweepSpec& spec, const std::vector<PlannedRun>& runs) {
  std::vector<std::string> groups;
  for (const PlannedRun& run : runs) {
    if (std::find(groups.begin(), groups.end(), run.group) == groups.end()) groups.push_back(run.group);
  }
  const auto check_named = [&](const Criterion& c, const std::string& key, const std::string& name) {
    if (std::find(groups.begin(), groups.end(), name) != groups.end()) return;
    std::string names;
    for (const std::string& g : groups) names += (names.empty() ? "" : ", ") + g;
    throw SweepError(c.origin + ": criteria." + key + " = \"" + name + "\" names no group of this sweep (groups: " +
                     names + ")");
  };
  for (const Criterion& c : spec.criteria) {
    check_named(c, "baseline", c.baseline);
    for (const std::string& name : c.groups) {
      check_named(c, "groups", name);
      if (name == c.baseline) {
        throw SweepError(c.origin + ": criteria.groups names the baseline \"" + name + "\", which is not judged against itself");
      }
    }
  }
}

// The seed parts of a run's name: runs of two groups pair by them.
std::string seed_of(const std::vector<NamePart>& parts) {
  std::string seed;
  for (const NamePart& part : parts) {
    if (part.is_seed) seed += "." + part.text;
  }
  return seed;
}

// `init_from = "@GROUP"`: the run of GROUP with the same seed becomes the run's source. A source
// must start fresh or from outside the sweep, so that no run waits on a run that waits on it.
void resolve_sources(std::vector<PlannedRun>& runs, const std::vector<std::string>& seeds) {
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string& init_from = runs[i].config.init_from;
    if (!init_from.starts_with("@")) continue;
    const std::string group = init_from.substr(1);
    std::size_t found = runs.size();
    for (std::size_t j = 0; j < runs.size(); ++j) {
      if (runs[j].group == group && seeds[j] == seeds[i]) found = j;
    }
    const std::string origin = "init_from = \"" + init_from + "\" (in run '" + runs[i].name + "')";
    if (found == runs.size()) {
      throw SweepError(origin + ": no run of group '" + group + "' with the seed of this run" +
                       (seeds[i].empty() ? "" : " (" + seeds[i].substr(1) + ")"));
    }
    if (found == i) throw SweepError(origin + ": a run cannot start from itself");
    if (runs[found].config.init_from.starts_with("@")) {
      throw SweepError(origin + ": run '" + runs[found].name + "' itself starts from another run of this sweep; "
                       "chains of warm starts are not ordered, start from its source or split the sweep");
    }
    runs[i].source = runs[found].name;
  }
}

}  // namespace

std::filesystem::path source_dir(const std::filesystem::path& sweep_dir, const PlannedRun& run) {
  return std::filesystem::absolute(sweep_dir / io::sweep_directory::kRuns / run.source);
}

std::vector<PlannedRun> expand(const SweepSpec& spec) {
  std::vector<PlannedRun> runs;
  std::vector<std::string> seeds;
  std::vector<std::size_t> index(spec.dimensions.size(), 0);
  while (true) {
    std::vector<NamePart> parts;
    Settings settings;
    for (std::size_t d = 0; d < spec.dimensions.size(); ++d) {
      const Choice& choice = spec.dimensions[d][index[d]];
      parts.insert(parts.end(), choice.parts.begin(), choice.parts.end());
      settings.insert(settings.end(), choice.settings.begin(), choice.settings.end());
    }
    PlannedRun run{join_name(parts), join_group(parts), settings, {}, {}};
    seeds.push_back(seed_of(parts));
    run.config = run_config(spec.base, settings, run.name);
    if (spec.search) {  // every probe lies between the ends: both must make valid configs
      for (const double end : {spec.search->low, spec.search->high}) run_config(spec.base, probe_settings(spec, settings, end), run.name);
    }
    runs.push_back(std::move(run));
    // Odometer: the last dimension turns fastest.
    std::size_t d = spec.dimensions.size();
    while (d > 0 && ++index[d - 1] == spec.dimensions[d - 1].size()) index[--d] = 0;
    if (d == 0) break;
  }
  check_names(runs);
  resolve_sources(runs, seeds);
  check_criteria(spec, runs);
  return runs;
}

}  // namespace altgrad::sweep
