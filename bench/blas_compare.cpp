// blas_compare: single-threaded row-major SGEMM speed of one BLAS library on the GEMM shapes of an
// AltGrad training step, plus a fingerprint of each shape's output bits.
//
//   blas_compare LIBRARY [BATCHES]
//
// LIBRARY is dlopen()ed (no BLAS is linked), so one binary compares OpenBLAS under each
// OPENBLAS_CORETYPE, BLIS, or any other library exporting cblas_sgemm; LIBRARY `altgrad` is
// AltGrad's own float GEMM (src/ops/cpu/float_gemm.cpp), the kernel a training step runs, built
// for this binary's instruction set. Run it single-threaded (OPENBLAS_NUM_THREADS=1
// BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1; scripts/compare_blas.sh does).
// Each shape's time is the best of BATCHES (default 5) batches of calls lasting at least 10 ms.
// Output lines start with a keyword (library, kernel, shape, step) so a script can collect them.
//
// The shapes are whole GEMMs. A training step runs them on the own GEMM; OpenBLAS computes the
// double GEMMs and the SGEMM ceiling `altgrad bench train` reports.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "ops/cpu/float_gemm.hpp"

namespace {

// The CBLAS ABI: enumerators are ints with these values in every implementation (cblas.h).
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
using SgemmFn = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a,
                         int lda, const float* b, int ldb, float beta, float* c, int ldc);

// ---- the shapes --------------------------------------------------------------------------------

enum class Model { base, m10, ceiling };  // default config; 6 layers × 384 channels; 1024³

const char* model_name(Model model) {
  switch (model) {
    case Model::base: return "default";
    case Model::m10: return "10.7M";
    case Model::ceiling: return "square";
  }
  return "?";
}

// One GEMM of a training step: C (m×n) = op(A) (m×k) · op(B) (k×n), and how often a step runs it.
struct Shape {
  Model model;
  const char* name;
  bool trans_a, trans_b;
  int m, n, k;
  int calls;  // per training step (forward + backward)
};

// A Linear layer Y = X·Wᵀ (X: N×C, W: OC×C) costs three GEMMs per step, each once per layer:
// forward Y = X·Wᵀ (NT), backward dX = dY·W (NN) and dW = dYᵀ·X (TN, a sum over the N tokens).
// Attention, per sequence and head (T×hs slices of q, k, v): scores = q·kᵀ, y = probs·v forward;
// dprobs = dy·vᵀ, dq = dscores·k, dk = dscoresᵀ·q, dv = probsᵀ·dy backward (src/ops/cpu/attention.cpp).
// Default config (configs/default.toml): 4 layers, C = 128, 4 heads (hs = 32), batch 16 × T = 128,
// so N = 2,048 tokens and 16·4 = 64 attention calls per layer. The 10.7M model: 6 layers, C = 384,
// 6 heads (hs = 64), the same tokens, 96 attention calls per layer. Both: vocabulary 256, tied LM head.
constexpr Shape kShapes[] = {
    {Model::base, "qkv.fwd", false, true, 2048, 384, 128, 4},
    {Model::base, "qkv.dx", false, false, 2048, 128, 384, 4},
    {Model::base, "qkv.dw", true, false, 384, 128, 2048, 4},
    {Model::base, "proj.fwd", false, true, 2048, 128, 128, 4},
    {Model::base, "proj.dx", false, false, 2048, 128, 128, 4},
    {Model::base, "proj.dw", true, false, 128, 128, 2048, 4},
    {Model::base, "fc.fwd", false, true, 2048, 512, 128, 4},
    {Model::base, "fc.dx", false, false, 2048, 128, 512, 4},
    {Model::base, "fc.dw", true, false, 512, 128, 2048, 4},
    {Model::base, "mlpproj.fwd", false, true, 2048, 128, 512, 4},
    {Model::base, "mlpproj.dx", false, false, 2048, 512, 128, 4},
    {Model::base, "mlpproj.dw", true, false, 128, 512, 2048, 4},
    {Model::base, "lmhead.fwd", false, true, 2048, 256, 128, 1},
    {Model::base, "lmhead.dx", false, false, 2048, 128, 256, 1},
    {Model::base, "lmhead.dw", true, false, 256, 128, 2048, 1},
    {Model::base, "att.scores", false, true, 128, 128, 32, 4 * 64},
    {Model::base, "att.pv", false, false, 128, 32, 128, 4 * 64},
    {Model::base, "att.dprobs", false, true, 128, 128, 32, 4 * 64},
    {Model::base, "att.dq", false, false, 128, 32, 128, 4 * 64},
    {Model::base, "att.dk_dv", true, false, 128, 32, 128, 2 * 4 * 64},
    {Model::m10, "qkv.fwd", false, true, 2048, 1152, 384, 6},
    {Model::m10, "qkv.dx", false, false, 2048, 384, 1152, 6},
    {Model::m10, "qkv.dw", true, false, 1152, 384, 2048, 6},
    {Model::m10, "proj.fwd", false, true, 2048, 384, 384, 6},
    {Model::m10, "proj.dx", false, false, 2048, 384, 384, 6},
    {Model::m10, "proj.dw", true, false, 384, 384, 2048, 6},
    {Model::m10, "fc.fwd", false, true, 2048, 1536, 384, 6},
    {Model::m10, "fc.dx", false, false, 2048, 384, 1536, 6},
    {Model::m10, "fc.dw", true, false, 1536, 384, 2048, 6},
    {Model::m10, "mlpproj.fwd", false, true, 2048, 384, 1536, 6},
    {Model::m10, "mlpproj.dx", false, false, 2048, 1536, 384, 6},
    {Model::m10, "mlpproj.dw", true, false, 384, 1536, 2048, 6},
    {Model::m10, "lmhead.fwd", false, true, 2048, 256, 384, 1},
    {Model::m10, "lmhead.dx", false, false, 2048, 384, 256, 1},
    {Model::m10, "lmhead.dw", true, false, 256, 384, 2048, 1},
    {Model::m10, "att.scores", false, true, 128, 128, 64, 6 * 96},
    {Model::m10, "att.pv", false, false, 128, 64, 128, 6 * 96},
    {Model::m10, "att.dprobs", false, true, 128, 128, 64, 6 * 96},
    {Model::m10, "att.dq", false, false, 128, 64, 128, 6 * 96},
    {Model::m10, "att.dk_dv", true, false, 128, 64, 128, 2 * 6 * 96},
    {Model::ceiling, "1024^3", false, false, 1024, 1024, 1024, 1},
};

// ---- the library -------------------------------------------------------------------------------

struct Library {
  void* handle;
  SgemmFn sgemm;
  std::string kernel;  // what the library says it runs: version and kernel family
};

template <typename Fn>
Fn symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

// Starts the library and asks it for one thread through its own call too, in case its environment
// variable was missed. BLIS must be initialized before bli_arch_query_id: asked earlier with
// BLIS_ARCH_TYPE set, it aborts.
void start_single_threaded(void* handle) {
  if (auto init = symbol<void (*)()>(handle, "bli_init")) init();
  if (auto set = symbol<void (*)(int)>(handle, "openblas_set_num_threads")) set(1);
  if (auto set = symbol<void (*)(std::int64_t)>(handle, "bli_thread_set_num_threads")) set(1);
}

// OpenBLAS: its build configuration and the core it picked; BLIS: its version and sub-configuration.
std::string describe_kernel(void* handle) {
  if (auto corename = symbol<char* (*)()>(handle, "openblas_get_corename")) {
    std::string text = std::string("OpenBLAS core=") + corename();
    if (auto config = symbol<char* (*)()>(handle, "openblas_get_config")) text += std::string(" config=") + config();
    if (auto threads = symbol<int (*)()>(handle, "openblas_get_num_threads"))
      text += " threads=" + std::to_string(threads());
    return text;
  }
  if (auto version = symbol<const char* (*)()>(handle, "bli_info_get_version_str")) {
    std::string text = std::string("BLIS ") + version();
    auto arch_id = symbol<int (*)()>(handle, "bli_arch_query_id");
    auto arch_name = symbol<const char* (*)(int)>(handle, "bli_arch_string");
    if (arch_id && arch_name) text += std::string(" arch=") + arch_name(arch_id());
    if (auto threads = symbol<std::int64_t (*)()>(handle, "bli_thread_get_num_threads"))
      text += " threads=" + std::to_string(threads());
    return text;
  }
  return "unknown (no openblas_get_corename or bli_info_get_version_str)";
}

// The own GEMM behind the CBLAS signature (row-major only, which is all this file calls).
void own_sgemm(int /*order*/, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a, int lda,
               const float* b, int ldb, float beta, float* c, int ldc) {
  altgrad::ops::cpu::float_gemm(trans_a == kTrans, trans_b == kTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

Library open_library(const char* path) {
  if (std::string(path) == "altgrad") {
    return {nullptr, own_sgemm, std::string("AltGrad float_gemm kernel=") + altgrad::ops::cpu::float_gemm_kernel()};
  }
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "blas_compare: cannot load %s: %s\n", path, dlerror());
    std::exit(2);
  }
  auto sgemm = symbol<SgemmFn>(handle, "cblas_sgemm");
  if (sgemm == nullptr) {
    std::fprintf(stderr, "blas_compare: %s has no cblas_sgemm\n", path);
    std::exit(2);
  }
  start_single_threaded(handle);
  return {handle, sgemm, describe_kernel(handle)};
}

// ---- operands ----------------------------------------------------------------------------------

struct FreeFloats {
  void operator()(float* p) const { std::free(p); }
};
using Floats = std::unique_ptr<float[], FreeFloats>;

// 64-byte aligned, so no library meets a different alignment than another.
Floats allocate(std::size_t count) {
  const std::size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
  return Floats(static_cast<float*>(std::aligned_alloc(64, bytes)));
}

// Fixed pseudo-random values in [-1, 1) with 24 significant bits (splitmix64 of the index), the
// same in every process, so two libraries multiply the same numbers.
void fill(std::span<float> values, std::uint64_t seed) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + i;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    values[i] = static_cast<float>(static_cast<double>(z >> 40) / 8388608.0 - 1.0);
  }
}

// The operands of one shape, stored row-major as the transposes say: A is m×k or (trans_a) k×m.
struct Operands {
  const Shape& shape;
  Floats a, b, c;
  std::size_t c_size;
};

Operands make_operands(const Shape& s) {
  const auto a_size = static_cast<std::size_t>(s.m) * s.k, b_size = static_cast<std::size_t>(s.k) * s.n;
  const auto c_size = static_cast<std::size_t>(s.m) * s.n;
  Operands op{s, allocate(a_size), allocate(b_size), allocate(c_size), c_size};
  fill({op.a.get(), a_size}, 1);
  fill({op.b.get(), b_size}, 2);
  std::fill_n(op.c.get(), c_size, 0.0f);
  return op;
}

void multiply(const Library& lib, Operands& op) {
  const Shape& s = op.shape;
  const int lda = s.trans_a ? s.m : s.k, ldb = s.trans_b ? s.k : s.n;
  lib.sgemm(kRowMajor, s.trans_a ? kTrans : kNoTrans, s.trans_b ? kTrans : kNoTrans, s.m, s.n, s.k, 1.0f,
            op.a.get(), lda, op.b.get(), ldb, 0.0f, op.c.get(), s.n);
}

// ---- measurements ------------------------------------------------------------------------------

// FNV-1a over the bytes of C: equal fingerprints mean (all but surely) equal bits.
std::uint64_t fingerprint(std::span<const float> c) {
  std::uint64_t hash = 0xCBF29CE484222325ull;
  for (const std::byte byte : std::as_bytes(c)) hash = (hash ^ std::to_integer<std::uint64_t>(byte)) * 0x100000001B3ull;
  return hash;
}

// The product's bits, computed over a C filled with `stale` first: beta = 0 must not read it.
std::uint64_t bits_of_product(const Library& lib, Operands& op, float stale) {
  std::fill_n(op.c.get(), op.c_size, stale);
  multiply(lib, op);
  return fingerprint({op.c.get(), op.c_size});
}

// Largest error of C against a double-precision product, relative to the sum of |a·b| terms: a
// library called with the wrong ABI (64-bit integers, column-major) fails this by far.
double relative_error(const Operands& op) {
  const Shape& s = op.shape;
  double worst = 0;
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      double sum = 0, magnitude = 0;
      for (int p = 0; p < s.k; ++p) {
        const double a = op.a[s.trans_a ? std::size_t(p) * s.m + i : std::size_t(i) * s.k + p];
        const double b = op.b[s.trans_b ? std::size_t(j) * s.k + p : std::size_t(p) * s.n + j];
        sum += a * b;
        magnitude += std::abs(a * b);
      }
      worst = std::max(worst, std::abs(op.c[std::size_t(i) * s.n + j] - sum) / magnitude);
    }
  }
  return worst;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Best time of one call: BATCHES batches, each of enough calls to last at least kBatchSeconds.
double best_seconds_per_call(const Library& lib, Operands& op, int batches) {
  constexpr double kBatchSeconds = 0.01;
  auto start = std::chrono::steady_clock::now();
  multiply(lib, op);
  const int calls = std::max(1, static_cast<int>(std::ceil(kBatchSeconds / std::max(seconds_since(start), 1e-7))));
  double best = 1e30;
  for (int batch = 0; batch < batches; ++batch) {
    start = std::chrono::steady_clock::now();
    for (int call = 0; call < calls; ++call) multiply(lib, op);
    best = std::min(best, seconds_since(start) / calls);
  }
  return best;
}

// ---- the report --------------------------------------------------------------------------------

void check_correct(const Library& lib) {
  for (const bool trans_a : {false, true}) {
    for (const bool trans_b : {false, true}) {
      const Shape probe{Model::ceiling, "probe", trans_a, trans_b, 67, 45, 131, 1};
      Operands op = make_operands(probe);
      multiply(lib, op);
      if (const double error = relative_error(op); !(error < 1e-5)) {
        std::fprintf(stderr, "blas_compare: wrong product (trans_a=%d trans_b=%d): relative error %g\n", trans_a,
                     trans_b, error);
        std::exit(1);
      }
    }
  }
}

// Times one shape and prints its line; returns the seconds it costs one training step.
double report_shape(const Library& lib, const Shape& s, int batches) {
  Operands op = make_operands(s);
  const std::uint64_t bits = bits_of_product(lib, op, 0.0f);
  const double seconds = best_seconds_per_call(lib, op, batches);
  // Single-threaded determinism: the same call gives the same bits, whatever C held before.
  if (bits_of_product(lib, op, -3.5f) != bits) {
    std::fprintf(stderr, "blas_compare: %s %s gave different bits on two calls\n", model_name(s.model), s.name);
    std::exit(1);
  }
  const double gflops = 2.0 * s.m * s.n * s.k / seconds * 1e-9;
  std::printf("shape %-7s %-11s %c%c %5d %5d %5d %4d %8.1f %10.2f %016llx\n", model_name(s.model), s.name,
              s.trans_a ? 'T' : 'N', s.trans_b ? 'T' : 'N', s.m, s.n, s.k, s.calls, gflops, seconds * 1e6,
              static_cast<unsigned long long>(bits));
  std::fflush(stdout);
  return seconds * s.calls;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: blas_compare LIBRARY [BATCHES]\n");
    return 2;
  }
  const int batches = argc == 3 ? std::atoi(argv[2]) : 5;
  const Library lib = open_library(argv[1]);
  check_correct(lib);
  std::printf("library %s\nkernel %s\n", argv[1], lib.kernel.c_str());
  std::printf("# shape model name op m n k calls_per_step GFLOP/s us_per_call output_fingerprint\n");
  double step_seconds[3] = {0, 0, 0};
  for (const Shape& s : kShapes) step_seconds[static_cast<int>(s.model)] += report_shape(lib, s, batches);
  for (const Model model : {Model::base, Model::m10})
    std::printf("step %s %.2f ms\n", model_name(model), step_seconds[static_cast<int>(model)] * 1e3);
  return 0;
}
