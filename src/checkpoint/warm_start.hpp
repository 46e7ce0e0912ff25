#pragma once
// Where a warm start (`init_from`, docs/quantization.md "Schedules and warm starts") takes its
// weights from: a checkpoint directory, or a finished run's checkpoint (its latest, or the one of
// init_from_step), identified by the CRC-32C of its model file so that a rerun of the new run's
// config.toml checks that it starts from the same weights.
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.hpp"

namespace altgrad::checkpoint {

struct WarmStartSource {
  std::filesystem::path checkpoint;
  std::int64_t step = 0;  // the source's optimizer steps at that checkpoint
  std::string checksum;   // CRC-32C of its model.safetensors, 8 hex digits

  nlohmann::json provenance() const;  // for the start event
};

// Throws ConfigError naming init_from and the problem: no such directory, a run that has not
// ended (running now, or interrupted), no checkpoint of init_from_step, a checksum that differs
// from init_from_checksum, or a model of another shape (each differing field named).
WarmStartSource find_warm_start(const config::TrainConfig& config);

// CRC-32C of a file's bytes as 8 lowercase hex digits. Throws io::FileError when unreadable.
std::string file_checksum(const std::filesystem::path& file);

}  // namespace altgrad::checkpoint
