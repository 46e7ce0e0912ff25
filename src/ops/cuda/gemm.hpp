#pragma once
// Row-major C = alpha · op(A) · op(B) + beta · C on the GPU, as ops/cpu/gemm.hpp on the host, through
// cuBLASLt in true FP32: compute type CUBLAS_COMPUTE_32F, never TF32 (DESIGN.md, "Hardware": the
// FP32 recipe is the reference).
//
// Same bits run to run: cuBLASLt's heuristic chooses an algorithm once per problem (shape,
// transposes, strides and the operands' alignment) and the choice is kept for the process; every
// call gets the same workspace size; everything runs on one stream. A fixed algorithm on the same
// GPU model and library version computes every element the same way (the cuBLAS documentation's
// reproducibility guarantee); its order is not the CPU's, so the bits differ from the CPU's.
#include <cstddef>
#include <memory>
#include <mutex>

namespace altgrad::ops::cuda {

class Gemm {
 public:
  // The cuBLASLt handle and the workspace. Throws std::runtime_error naming the failed call.
  Gemm();
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // m, n, k >= 1. beta = 0: C is not read. Throws std::runtime_error when cuBLASLt has no algorithm
  // for the problem or the call fails.
  void operator()(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
                  std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc);

  // The workspace every call may use: 32 MiB, what NVIDIA suggests for Hopper.
  static constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

 private:
  struct Plans;  // the handle, the workspace and the plan of every problem seen (gemm.cu)
  std::unique_ptr<Plans> plans_;
  std::mutex mutex_;  // guards the plans' map, which calls from several threads would share
};

}  // namespace altgrad::ops::cuda
