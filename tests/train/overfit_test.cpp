// Memorising one batch: the engine's forward, backward and AdamW together drive the loss on a
// single repeated batch to nearly zero, as any correct training stack must.
#include <gtest/gtest.h>

#include <vector>

#include "model/activations.hpp"
#include "model/gpt.hpp"
#include "optim/adamw.hpp"
#include "optim/schedule.hpp"

namespace altgrad::train {
namespace {

TEST(Overfit, OneSmallBatchIsMemorised) {
  model::GptConfig c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 32;
  c.block_size = 16;
  model::Gpt<float> gpt(c);
  gpt.initialize(3);
  const std::size_t B = 2, T = 16;
  std::vector<std::int32_t> x(B * T), y(B * T);
  for (std::size_t i = 0; i < B * T; ++i) {
    x[i] = static_cast<std::int32_t>((i * 97 + 13) % 256);
    y[i] = static_cast<std::int32_t>((i * 31 + 7) % 256);  // arbitrary targets: only memory can fit them
  }
  model::Activations<float> acts(c, B, T);
  optim::AdamW adam(gpt.layout().size(), {0.9f, 0.95f, 1e-8f, 0.0f}, {{0, gpt.layout().size(), true}});
  float first = 0.0f, loss = 0.0f;
  for (int step = 0; step < 300; ++step) {
    gpt.zero_gradients();
    loss = model::gpt_forward(gpt, acts, x, y);
    if (step == 0) first = loss;
    model::gpt_backward(gpt, acts);
    adam.step(gpt.parameters(), gpt.gradients(), 3e-3f);
  }
  EXPECT_GT(first, 5.0f);  // ≈ ln 256 before training
  EXPECT_LT(loss, 0.05f) << "after 300 steps on one batch";
}

}  // namespace
}  // namespace altgrad::train
