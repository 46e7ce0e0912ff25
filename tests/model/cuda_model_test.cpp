// The whole GPT on the CUDA backend against the CPU engine: one forward and backward pass from the
// same parameters and batch, the loss and every parameter's gradient compared at FP32 tolerance,
// and the same bits on a second pass. Label gpu; skipped, with the reason, where the build has no
// CUDA engine or the process sees no GPU, unless ALTGRAD_REQUIRE_GPU=1 (scripts/gpu_check.sh) makes
// that a failure.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/gpt.hpp"
#include "model_test_support.hpp"

namespace {

using namespace altgrad;
using namespace altgrad::model;
using namespace altgrad::model_test;

// The CUDA backend, or the reason there is none.
std::optional<ops::Backend<float>> cuda_backend(std::string& why) {
  try {
    return ops::backend_for<float>(ops::Device::cuda);
  } catch (const std::runtime_error& e) {
    why = e.what();
    return std::nullopt;
  }
}

std::vector<float> on_host(const Gpt<float>& model, std::span<const float> values) {
  std::vector<float> host(values.size());
  ops::download(*model.backend().memory, std::span<float>(host), values);
  return host;
}

// ‖a − b‖ / ‖b‖ over one tensor, in double.
double relative_error(std::span<const float> a, std::span<const float> b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return norm == 0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

struct CudaVariant {
  Norm norm;
  Mlp mlp;
  bool bias;
};

class CudaModel : public ::testing::TestWithParam<CudaVariant> {};

TEST_P(CudaModel, OneStepsGradientsMatchTheCpuEngine) {
  std::string why;
  const std::optional<ops::Backend<float>> cuda = cuda_backend(why);
  if (!cuda) {
    const char* required = std::getenv("ALTGRAD_REQUIRE_GPU");
    if (required != nullptr && std::string(required) == "1") FAIL() << why;
    GTEST_SKIP() << why;
  }
  const CudaVariant v = GetParam();
  GptConfig config = tiny_config(v.norm, v.mlp, v.bias);
  config.n_embd = 64;
  config.n_head = 4;
  config.block_size = 48;  // not a multiple of 32: the kernels' edges
  const std::size_t B = 3, T = config.block_size;
  const std::vector<std::int32_t> tokens = tokens_for(config, B * T, 1), targets = tokens_for(config, B * T, 2);

  Gpt<float> cpu(config);
  cpu.initialize(11);
  Activations<float> cpu_acts(config, B, T);
  const float cpu_loss = gpt_forward(cpu, cpu_acts, tokens, targets);
  gpt_backward(cpu, cpu_acts);

  Gpt<float> gpu(config, *cuda);
  gpu.initialize(11);
  Activations<float> gpu_acts(config, B, T, OperandCopies::none, *cuda->memory);
  const float gpu_loss = gpt_forward(gpu, gpu_acts, tokens, targets);
  gpt_backward(gpu, gpu_acts);

  EXPECT_NEAR(gpu_loss, cpu_loss, 1e-5 * std::abs(cpu_loss));
  const std::vector<float> gradients = on_host(gpu, std::as_const(gpu).gradients());
  for (const TensorSpec& spec : cpu.layout().tensors()) {
    const std::span<const float> expected = spec.slot.in(std::as_const(cpu).gradients());
    const std::span<const float> actual = spec.slot.in(std::span<const float>(gradients));
    EXPECT_LE(relative_error(actual, expected), 1e-4) << spec.name;
  }

  // The same bits on a second pass: no atomics, pinned GEMM algorithms.
  gpu.zero_gradients();
  const float again = gpt_forward(gpu, gpu_acts, tokens, targets);
  gpt_backward(gpu, gpu_acts);
  EXPECT_EQ(std::memcmp(&again, &gpu_loss, sizeof again), 0);
  const std::vector<float> second = on_host(gpu, std::as_const(gpu).gradients());
  EXPECT_EQ(std::memcmp(second.data(), gradients.data(), gradients.size() * sizeof(float)), 0);
}

INSTANTIATE_TEST_SUITE_P(Variants, CudaModel,
                         ::testing::Values(CudaVariant{Norm::layernorm, Mlp::gelu, false},
                                           CudaVariant{Norm::rmsnorm, Mlp::swiglu, true}));

}  // namespace
