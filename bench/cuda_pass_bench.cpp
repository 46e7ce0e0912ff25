// The engine's side of scripts/gpu_check.sh's speed table: tokens/s of one forward and backward
// pass of the GPT on the CUDA backend (FP32 with no quantization hooks: what the engine runs on a
// GPU today, docs/cuda.md) at one shape, timed the way bench/torch_gpu_pass.py times PyTorch's.
// Prints one JSON object: {"tokens_per_s", "parameters"}.
// Usage: cuda_pass_bench --n_layer L --n_head H --n_embd C --block_size T --batch_size B --steps N
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/gpt.hpp"

namespace {

using namespace altgrad;

std::map<std::string, std::size_t> parse_arguments(int argc, char** argv) {
  std::map<std::string, std::size_t> values{{"--n_layer", 0}, {"--n_head", 0},     {"--n_embd", 0},
                                            {"--block_size", 0}, {"--batch_size", 0}, {"--steps", 0}};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!values.contains(argv[i])) throw std::invalid_argument(std::string("unknown option ") + argv[i]);
    values[argv[i]] = std::stoul(argv[i + 1]);
  }
  for (const auto& [name, value] : values) {
    if (value == 0) throw std::invalid_argument(name + " must be given, and positive");
  }
  return values;
}

double tokens_per_second(const std::map<std::string, std::size_t>& a) {
  model::GptConfig config;
  config.n_layer = a.at("--n_layer");
  config.n_head = a.at("--n_head");
  config.n_embd = a.at("--n_embd");
  config.block_size = a.at("--block_size");
  const std::size_t B = a.at("--batch_size"), T = config.block_size, steps = a.at("--steps");
  const ops::Backend<float> cuda = ops::backend_for<float>(ops::Device::cuda);
  model::Gpt<float> gpt(config, cuda);
  gpt.initialize(1);
  model::Activations<float> acts(config, B, T, model::OperandCopies::none, *cuda.memory);
  std::mt19937 generator(0);
  std::uniform_int_distribution<std::int32_t> byte(0, 255);
  std::vector<std::int32_t> x(B * T), y(B * T);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = byte(generator), y[i] = byte(generator);
  float last = 0;
  const auto step = [&] {
    gpt.zero_gradients();
    model::gpt_forward(gpt, acts, x, y);
    model::gpt_backward(gpt, acts);
    // A download waits for every kernel before it in the stream: the pass has ended.
    ops::download(*cuda.memory, std::span<float>(&last, 1), std::as_const(gpt).gradients().first(1));
  };
  for (int i = 0; i < 3; ++i) step();  // warm-up: the GEMMs' plans and the allocator's first use
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < steps; ++i) step();
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return static_cast<double>(B * T * steps) / elapsed.count();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const auto arguments = parse_arguments(argc, argv);
    const double rate = tokens_per_second(arguments);
    const model::GptConfig shape{.n_layer = arguments.at("--n_layer"), .n_head = arguments.at("--n_head"),
                                 .n_embd = arguments.at("--n_embd"), .block_size = arguments.at("--block_size")};
    std::printf("{\"tokens_per_s\": %.1f, \"parameters\": %zu}\n", rate, model::ParameterLayout(shape).size());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_pass_bench: %s\n", e.what());
    return 2;
  }
}
