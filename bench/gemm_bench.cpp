#include "gemm_bench.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "format/accumulator.hpp"
#include "format/codec.hpp"
#include "format/parse.hpp"
#include "ops/cpu/emulated_gemm.hpp"
#include "ops/cpu/float_gemm.hpp"
#include "seconds.hpp"

namespace altgrad::bench {
namespace {

// One GEMM of the step: C (m, n) = A (m, k) · B, B read as the forward pass reads Wᵀ.
struct Shape {
  std::string name;
  std::size_t m, n, k;
};

// The best time of each of two calls over `repeats` rounds that take them in turn, so that a
// machine whose speed drifts during the bench favours neither side of the ratio.
template <typename First, typename Second>
std::pair<double, double> best_of_each(int repeats, const First& first, const Second& second) {
  double best_first = std::numeric_limits<double>::infinity(), best_second = best_first;
  for (int r = 0; r < repeats; ++r) {
    best_first = std::min(best_first, seconds(first));
    best_second = std::min(best_second, seconds(second));
  }
  return {best_first, best_second};
}

// E4M3 values: what a fake-quantized copy holds (unit scale).
std::vector<float> e4m3_values(std::size_t count, std::uint32_t seed) {
  const format::Format f = format::make_format(format::parse_format("e4m3"));
  std::mt19937 rng(seed);
  std::vector<float> out(count);
  for (float& v : out) {
    do v = format::decode(f, rng() & 0xFFu);
    while (!std::isfinite(v));
  }
  return out;
}

// Every Linear GEMM of one block, forward and backward, for N = B·T tokens.
std::vector<Shape> step_shapes(const config::TrainConfig& c) {
  const std::size_t N = static_cast<std::size_t>(c.batch_size * c.block_size), C = static_cast<std::size_t>(c.n_embd);
  const std::size_t H = 4 * C;
  std::vector<Shape> shapes;
  for (const auto& [name, in, out] : {std::tuple{"attn.c_attn", C, 3 * C}, std::tuple{"attn.c_proj", C, C},
                                      std::tuple{"mlp.c_fc", C, H}, std::tuple{"mlp.c_proj", H, C}}) {
    shapes.push_back({std::string(name) + " forward", N, out, in});
    shapes.push_back({std::string(name) + " dgrad", N, in, out});
    shapes.push_back({std::string(name) + " wgrad", out, in, N});
  }
  return shapes;
}

}  // namespace

int run_gemm_bench(const GemmBenchOptions& options, std::ostream& out) {
  const format::AccumulatorModel model = format::parse_accumulator(options.accumulate);
  char line[256];
  std::snprintf(line, sizeof line, "gemm benchmark: %s against the float GEMM, E4M3 operands, %d thread(s), best of %d rounds taking both in turn\n",
                format::accumulator_name(model).c_str(), omp_get_max_threads(), options.repeats);
  out << line;
  out << "shape                    m     n     k   float GFLOP/s  emulated GFLOP/s  ratio\n";
  double float_total = 0, emulated_total = 0;
  for (const Shape& s : step_shapes(options.config)) {
    const std::vector<float> a = e4m3_values(s.m * s.k, 1), b = e4m3_values(s.k * s.n, 2);
    std::vector<float> c(s.m * s.n);
    const auto [t_float, t_emulated] = best_of_each(
        options.repeats,
        [&] { ops::cpu::float_gemm(false, false, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n, 0.0f, c.data(), s.n); },
        [&] {
          ops::cpu::emulated_gemm(model, s.m, s.n, s.k, {a.data(), s.k, 1, -6}, {b.data(), s.n, 1, -6}, 1.0f, false,
                                  c.data(), s.n);
        });
    const double flops = 2.0 * static_cast<double>(s.m * s.n * s.k);
    float_total += t_float;
    emulated_total += t_emulated;
    std::snprintf(line, sizeof line, "%-20s %5zu %5zu %5zu %15.2f %17.2f  %5.3f\n", s.name.c_str(), s.m, s.n, s.k,
                  flops / t_float * 1e-9, flops / t_emulated * 1e-9, t_float / t_emulated);
    out << line;
  }
  std::snprintf(line, sizeof line, "one block's Linear GEMMs: float %.2f ms, emulated %.2f ms, ratio %.3f\n",
                float_total * 1e3, emulated_total * 1e3, float_total / emulated_total);
  out << line;
  return 0;
}

}  // namespace altgrad::bench
