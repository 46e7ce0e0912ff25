#include "config/config.hpp"

namespace altgrad::config {

model::GptConfig gpt_config(const TrainConfig& c) {
  model::GptConfig g;
  g.n_layer = static_cast<std::size_t>(c.n_layer);
  g.n_head = static_cast<std::size_t>(c.n_head);
  g.n_embd = static_cast<std::size_t>(c.n_embd);
  g.block_size = static_cast<std::size_t>(c.block_size);
  g.vocab_size = 256;
  g.bias = c.bias;
  g.norm = c.norm;
  g.mlp = c.mlp;
  g.mlp_hidden = static_cast<std::size_t>(c.mlp_hidden);
  model::validate(g);
  g.mlp_hidden = model::hidden_size(g);  // resolved, as checkpoints store it
  return g;
}

}  // namespace altgrad::config
