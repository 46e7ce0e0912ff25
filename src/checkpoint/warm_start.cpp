#include "checkpoint/warm_start.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "checkpoint/checkpoint.hpp"
#include "io/atomic_file.hpp"
#include "io/crc32c.hpp"
#include "io/run_directory.hpp"


namespace altgrad::checkpoint {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const config::TrainConfig& config, const std::string& why) {
  throw config::ConfigError("init_from = \"" + config.init_from + "\": " + why);
}

// The last event a run wrote; null when the file is absent or empty.
nlohmann::json last_event(const fs::path& events) {
  std::ifstream in(events);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  if (last.empty()) return nullptr;
  return nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
}

// A run directory may be used once its run has ended: a run still training (or interrupted, to be
// resumed) would give a checkpoint that is not its last.
void check_run_ended(const config::TrainConfig& config, const fs::path& run_dir) {
  const fs::path events = run_dir / io::run_directory::kEvents;
  if (!fs::exists(events)) return;  // checkpoints copied without their log
  const nlohmann::json last = last_event(events);
  const bool ended = last.is_object() && last.value(io::run_directory::kEventKey, "") == io::run_directory::kEndEvent && !last.value(io::run_directory::kInterruptedKey, false);
  if (!ended) {
    fail(config, "the run has not finished (" + events.string() +
                     " has no end event: it is running now, or was interrupted); let it finish, or name one of "
                     "its checkpoints (" + (run_dir / io::run_directory::kCheckpoints / (std::string(io::run_directory::kCheckpointPrefix) + "N")).string() + ")");
  }
}

fs::path source_checkpoint(const config::TrainConfig& config) {
  const fs::path dir = config.init_from;
  if (!fs::is_directory(dir)) fail(config, "no such directory");
  if (fs::exists(dir / io::run_directory::kModel)) {
    if (config.init_from_step > 0) fail(config, "is a checkpoint; init_from_step applies to a run directory");
    return dir;
  }
  check_run_ended(config, dir);
  if (config.init_from_step == 0) return resolve_checkpoint(dir);
  const fs::path step = io::run_directory::checkpoint_dir(dir, config.init_from_step);
  if (!fs::exists(step / io::run_directory::kModel)) {
    fail(config, "has no checkpoint of init_from_step = " + std::to_string(config.init_from_step) + " (no " +
                     step.string() + ")");
  }
  return step;
}

}  // namespace

nlohmann::json WarmStartSource::provenance() const {
  return {{"checkpoint", checkpoint.string()}, {"step", step}, {"model_crc32c", checksum}};
}

std::string file_checksum(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw io::FileError(file.string() + ": cannot open for reading");
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", io::crc32c(std::as_bytes(std::span<const char>(bytes))));
  return hex;
}

WarmStartSource find_warm_start(const config::TrainConfig& config) {
  WarmStartSource source;
  source.checkpoint = source_checkpoint(config);
  source.step = load_state(source.checkpoint).step;
  source.checksum = file_checksum(source.checkpoint / io::run_directory::kModel);
  if (const std::string differences =
          model_config_differences(load_checkpoint_config(source.checkpoint), config::gpt_config(config));
      !differences.empty()) {
    fail(config, "the source's model has another shape than this config's (" + differences +
                     "): a warm start loads every tensor as it is stored");
  }
  if (!config.init_from_checksum.empty() && config.init_from_checksum != source.checksum) {
    fail(config, "the model file " + (source.checkpoint / io::run_directory::kModel).string() + " has CRC-32C " +
                     source.checksum + ", init_from_checksum = \"" + config.init_from_checksum +
                     "\" asks for another: the source changed since this config was written");
  }
  return source;
}

}  // namespace altgrad::checkpoint
