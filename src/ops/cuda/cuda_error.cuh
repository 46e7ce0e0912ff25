#pragma once
// CUDA runtime failures as std::runtime_error: "<what>: <CUDA's description>", where `what` names
// the call and its subject (a size, a kernel). `what` is a string, or a function that makes one,
// called only on failure, so that a successful check in the step loop allocates nothing.
// (cuBLASLt's: ops/cuda/cublas_lt_library.cuh.)
#include <cuda_runtime_api.h>

#include <concepts>
#include <stdexcept>
#include <string>

namespace altgrad::ops::cuda {

template <typename What>
requires std::invocable<What&>
void check_cuda(cudaError_t status, What&& what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what()) + ": " + cudaGetErrorString(status));
}

inline void check_cuda(cudaError_t status, const char* what) {
  check_cuda(status, [what] { return std::string(what); });
}

// After a launch: a bad configuration shows here, a fault inside the kernel at the next call that
// waits for the GPU (a download).
inline void check_launch(const char* kernel) {
  check_cuda(cudaGetLastError(), [kernel] { return std::string("launch of ") + kernel; });
}

}  // namespace altgrad::ops::cuda
