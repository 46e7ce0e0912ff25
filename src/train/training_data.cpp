#include "train/training_data.hpp"

#include <utility>

namespace altgrad::train {

ByteDataset load_training_data(const TrainConfig& config, const std::filesystem::path& repo_root) {
  Corpus corpus = load_corpus({resolve_corpus_path(config.data, repo_root), config.data_format, config.jsonl_field});
  DatasetOptions options{config.val_fraction, config.block_size, config.seed, corpus.path.string()};
  return ByteDataset(std::move(corpus.bytes), std::move(options));
}

}  // namespace altgrad::train
