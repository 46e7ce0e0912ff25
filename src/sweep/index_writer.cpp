#include "sweep/index_writer.hpp"
#include "io/atomic_file.hpp"
#include "io/run_directory.hpp"


namespace altgrad::sweep {
namespace {

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

nlohmann::json search_json(const SearchRecord& search) {
  const Bracket bracket = bracket_of(search.probes);
  nlohmann::json probes = nlohmann::json::array();
  for (std::size_t i = 0; i < search.probes.size(); ++i) {
    probes.push_back({{"value", search.probes[i].value}, {"run", search.probe_runs[i]},
                      {"diverged", search.probes[i].diverged}, {"reason", search.reasons[i]}});
  }
  return {{"kind", "lr_threshold"}, {"group", search.group}, {"seed", search.seed}, {"key", search.key},
          {"bracket", {optional_number(bracket.stable), optional_number(bracket.diverged)}}, {"probes", probes}};
}

}  // namespace

nlohmann::json index_json(const std::string& base_label, const std::vector<IndexedRun>& runs,
                          const std::vector<SearchRecord>& searches, const std::vector<Criterion>& criteria) {
  nlohmann::json run_list = nlohmann::json::array();
  for (const IndexedRun& indexed : runs) {
    const PlannedRun& run = *indexed.run;
    nlohmann::json entry = {{"name", run.name}, {"dir", "runs/" + run.name}, {"group", run.group},
                            {"seed", run.config.seed}, {"settings", settings_json(run.settings)}};
    if (indexed.probe_of) entry["probe_of"] = *indexed.probe_of;
    run_list.push_back(std::move(entry));
  }
  nlohmann::json search_list = nlohmann::json::array();
  for (const SearchRecord& search : searches) search_list.push_back(search_json(search));
  nlohmann::json criterion_list = nlohmann::json::array();
  for (const Criterion& c : criteria) {
    nlohmann::json entry = {{"baseline", c.baseline}, {"max_gap_pct", c.max_gap_pct}, {"min_seeds", c.min_seeds},
                            {"min_steps", c.min_steps}};
    if (!c.groups.empty()) entry["groups"] = c.groups;
    criterion_list.push_back(std::move(entry));
  }
  return {{"format", "altgrad-sweep/1"}, {"base", base_label}, {io::sweep_directory::kRunsKey, run_list}, {"searches", search_list},
          {"criteria", criterion_list}};
}

void write_index(const std::filesystem::path& sweep_dir, const nlohmann::json& index) {
  io::write_file_atomically(sweep_dir / io::sweep_directory::kIndex, [&](std::ostream& out) { out << index.dump(2) << '\n'; });
}

}  // namespace altgrad::sweep
