#include "ops/cuda/gemm.hpp"

#include <cublasLt.h>

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

#include "ops/cuda/cublas_lt_library.cuh"
#include "ops/cuda/cuda_error.cuh"

namespace altgrad::ops::cuda {
namespace {

// A problem as cuBLASLt is given it, column-major (Gemm::operator()): the key of its plan.
struct Problem {
  bool trans_a, trans_b;
  std::uint64_t m, n, k;
  std::int64_t lda, ldb, ldc;
  std::uint32_t align_a, align_b, align_c;  // bytes: the largest power of two up to 256 dividing the address

  auto tied() const { return std::tie(trans_a, trans_b, m, n, k, lda, ldb, ldc, align_a, align_b, align_c); }
  bool operator<(const Problem& other) const { return tied() < other.tied(); }
};

std::uint32_t alignment(const void* pointer) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  std::uint32_t bytes = 256;
  while (bytes > 4 && address % bytes != 0) bytes /= 2;
  return bytes;
}

std::string describe(const Problem& p) {
  return std::string("a column-major ") + (p.trans_a ? "T" : "N") + (p.trans_b ? "T" : "N") +
         " GEMM of m = " + std::to_string(p.m) + ", n = " + std::to_string(p.n) + ", k = " + std::to_string(p.k);
}

// cuBLASLt's descriptors, destroyed with their owner.
struct Destroy {
  void operator()(cublasLtMatmulDescOpaque_t* d) const { cublas_lt().matmul_desc_destroy(d); }
  void operator()(cublasLtMatrixLayoutOpaque_t* l) const { cublas_lt().matrix_layout_destroy(l); }
  void operator()(cublasLtMatmulPreferenceOpaque_t* p) const { cublas_lt().preference_destroy(p); }
};
using MatmulDesc = std::unique_ptr<cublasLtMatmulDescOpaque_t, Destroy>;
using Layout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, Destroy>;
using Preference = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, Destroy>;

// Throws naming `call` and the problem.
void check(cublasStatus_t status, const char* call, const std::string& problem) {
  check_cublas(status, [&] { return std::string(call) + " for " + problem; });
}

Layout make_layout(std::uint64_t rows, std::uint64_t cols, std::int64_t ld, const std::string& problem) {
  cublasLtMatrixLayout_t layout = nullptr;
  check(cublas_lt().matrix_layout_create(&layout, CUDA_R_32F, rows, cols, ld), "cublasLtMatrixLayoutCreate", problem);
  return Layout(layout);
}

template <typename Value>
void set_preference(const Preference& preference, cublasLtMatmulPreferenceAttributes_t attribute, Value value,
                    const std::string& problem) {
  check(cublas_lt().preference_set_attribute(preference.get(), attribute, &value, sizeof value),
        "cublasLtMatmulPreferenceSetAttribute", problem);
}

// The descriptors of one problem and the algorithm the heuristic chose for it, made once.
class Plan {
 public:
  Plan(cublasLtHandle_t handle, const Problem& p) : problem_(describe(p)) {
    const CublasLtLibrary& lt = cublas_lt();
    cublasLtMatmulDesc_t desc = nullptr;
    // True FP32: products and sums in float, no TF32 (that is CUBLAS_COMPUTE_32F_FAST_TF32).
    check(lt.matmul_desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate", problem_);
    desc_.reset(desc);
    const cublasOperation_t op_a = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    check(lt.matmul_desc_set_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a),
          "cublasLtMatmulDescSetAttribute", problem_);
    check(lt.matmul_desc_set_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b),
          "cublasLtMatmulDescSetAttribute", problem_);
    // The stored shapes, before the operations: A m×k (k×m to be transposed), B k×n (n×k), C m×n.
    a_ = make_layout(p.trans_a ? p.k : p.m, p.trans_a ? p.m : p.k, p.lda, problem_);
    b_ = make_layout(p.trans_b ? p.n : p.k, p.trans_b ? p.k : p.n, p.ldb, problem_);
    c_ = make_layout(p.m, p.n, p.ldc, problem_);

    cublasLtMatmulPreference_t made = nullptr;
    check(lt.preference_create(&made), "cublasLtMatmulPreferenceCreate", problem_);
    const Preference preference(made);
    set_preference(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, std::uint64_t{Gemm::kWorkspaceBytes},
                   problem_);
    // The algorithm may assume no more alignment than the operands have (the default assumes 256
    // bytes; the model's parameters are views into one buffer at any float's offset).
    set_preference(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, p.align_a, problem_);
    set_preference(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, p.align_b, problem_);
    set_preference(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, p.align_c, problem_);
    set_preference(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, p.align_c, problem_);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    check(lt.algo_get_heuristic(handle, desc, a_.get(), b_.get(), c_.get(), c_.get(), preference.get(), 1, &result,
                                &found),
          "cublasLtMatmulAlgoGetHeuristic", problem_);
    if (found == 0) throw std::runtime_error("cuBLASLt has no FP32 algorithm for " + problem_);
    algorithm_ = result.algo;
  }

  // D = C, in place, on the default stream.
  void run(cublasLtHandle_t handle, void* workspace, float alpha, const float* a, const float* b, float beta,
           float* c) const {
    check(cublas_lt().matmul(handle, desc_.get(), &alpha, a, a_.get(), b, b_.get(), &beta, c, c_.get(), c, c_.get(),
                             &algorithm_, workspace, Gemm::kWorkspaceBytes, nullptr),
          "cublasLtMatmul", problem_);
  }

 private:
  std::string problem_;
  MatmulDesc desc_;
  Layout a_, b_, c_;
  cublasLtMatmulAlgo_t algorithm_{};
};

}  // namespace

struct Gemm::Plans {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::map<Problem, Plan> plans;

  ~Plans() {
    plans.clear();
    cudaFree(workspace);
    if (handle != nullptr) cublas_lt().destroy(handle);
  }
};

Gemm::Gemm() : plans_(std::make_unique<Plans>()) {
  check_cublas(cublas_lt().create(&plans_->handle), [] { return "cublasLtCreate"; });
  check_cuda(cudaMalloc(&plans_->workspace, kWorkspaceBytes),
             [] { return "cudaMalloc of the GEMM workspace's " + std::to_string(kWorkspaceBytes) + " bytes"; });
}

Gemm::~Gemm() = default;

void Gemm::operator()(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
                      const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
                      std::size_t ldc) {
  // cuBLASLt is column-major, where a row-major matrix reads as its transpose: the row-major
  // C = op(A)·op(B) is the column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, an n×m product with B first.
  const Problem p{trans_b,
                  trans_a,
                  n,
                  m,
                  k,
                  static_cast<std::int64_t>(ldb),
                  static_cast<std::int64_t>(lda),
                  static_cast<std::int64_t>(ldc),
                  alignment(b),
                  alignment(a),
                  alignment(c)};
  const std::lock_guard lock(mutex_);
  auto it = plans_->plans.find(p);
  if (it == plans_->plans.end()) it = plans_->plans.try_emplace(p, plans_->handle, p).first;
  it->second.run(plans_->handle, plans_->workspace, alpha, b, a, beta, c);
}

}  // namespace altgrad::ops::cuda
