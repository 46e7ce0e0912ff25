#pragma once
// cuBLASLt, loaded when the CUDA backend first needs it rather than when a program starts. Every
// program of a CUDA build links the CUDA engine (through altgrad_ops), and linking the 540 MB
// library cost each process 0.16 s and 210 MB of resident memory at start-up (an empty main
// linked against it, measured): CPU runs, sweeps and the test suite's hundreds of processes would
// pay that for nothing. The CUDA runtime itself costs nothing measurable and is linked.
#include <cublasLt.h>

#include <concepts>
#include <stdexcept>
#include <string>

namespace altgrad::ops::cuda {

// The functions ops/cuda/gemm.cu calls, from the loaded library.
struct CublasLtLibrary {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtGetStatusString) status_string;
  decltype(&cublasLtMatmulDescCreate) matmul_desc_create;
  decltype(&cublasLtMatmulDescDestroy) matmul_desc_destroy;
  decltype(&cublasLtMatmulDescSetAttribute) matmul_desc_set_attribute;
  decltype(&cublasLtMatrixLayoutCreate) matrix_layout_create;
  decltype(&cublasLtMatrixLayoutDestroy) matrix_layout_destroy;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set_attribute;
  decltype(&cublasLtMatmulAlgoGetHeuristic) algo_get_heuristic;
  decltype(&cublasLtMatmul) matmul;
};

// Loaded on the first call (thread-safe), by its soname libcublasLt.so.<the major version compiled
// against>, then by the path the build linked against. Throws std::runtime_error naming both and
// the loader's error where neither loads or a function is missing; a later call tries again.
const CublasLtLibrary& cublas_lt();

// A cuBLASLt failure as std::runtime_error "<what>: <cuBLASLt's description>"; `what` is made only then.
template <typename What>
requires std::invocable<What&>
void check_cublas(cublasStatus_t status, What&& what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what()) + ": " + cublas_lt().status_string(status));
  }
}

}  // namespace altgrad::ops::cuda
