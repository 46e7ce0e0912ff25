#pragma once
// The dataset a training config asks for: where the config meets the data layer.
#include <filesystem>

#include "config/config.hpp"
#include "data/byte_dataset.hpp"

namespace altgrad::train {

// Loads the corpus at config.data (or kDefaultCorpus under repo_root when it is empty) in
// config.data_format, splits it by config.val_fraction, checks it against config.block_size, and
// samples with config.seed. Throws DataError.
data::ByteDataset load_training_data(const config::TrainConfig& config, const std::filesystem::path& repo_root);

}  // namespace altgrad::train
