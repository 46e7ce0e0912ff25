#include "train/training_data.hpp"

#include <utility>

namespace altgrad::train {

data::ByteDataset load_training_data(const config::TrainConfig& config, const std::filesystem::path& repo_root) {
  data::Corpus corpus = data::load_corpus({data::resolve_corpus_path(config.data, repo_root), config.data_format, config.jsonl_field});
  data::DatasetOptions options{config.val_fraction, config.block_size, config.seed, corpus.path.string()};
  return data::ByteDataset(std::move(corpus.bytes), std::move(options));
}

}  // namespace altgrad::train
