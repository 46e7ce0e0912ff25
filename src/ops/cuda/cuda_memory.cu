#include "ops/cuda/cuda_memory.hpp"

#include <algorithm>
#include <string>

#include "ops/cuda/cuda_error.cuh"

namespace altgrad::ops::cuda {

void* CudaMemory::allocate_zeroed(std::size_t bytes) {
  void* data = nullptr;
  check_cuda(cudaMalloc(&data, bytes), [bytes] { return "cudaMalloc of " + std::to_string(bytes) + " bytes"; });
  const cudaError_t zeroed = cudaMemset(data, 0, bytes);
  if (zeroed != cudaSuccess) {
    cudaFree(data);
    check_cuda(zeroed, [bytes] { return "cudaMemset of " + std::to_string(bytes) + " new bytes"; });
  }
  sizes_[data] = bytes;
  allocated_ += bytes;
  peak_ = std::max(peak_, allocated_);
  return data;
}

// A release that fails (a context already torn down at exit) has nothing left to free.
void CudaMemory::release(void* data) noexcept {
  if (const auto found = sizes_.find(data); found != sizes_.end()) {
    allocated_ -= found->second;
    sizes_.erase(found);
  }
  cudaFree(data);
}

void CudaMemory::upload(void* dst, const void* host_src, std::size_t bytes) {
  check_cuda(cudaMemcpy(dst, host_src, bytes, cudaMemcpyHostToDevice),
             [bytes] { return "cudaMemcpy of " + std::to_string(bytes) + " bytes from the host"; });
}

void CudaMemory::download(void* host_dst, const void* src, std::size_t bytes) {
  check_cuda(cudaMemcpy(host_dst, src, bytes, cudaMemcpyDeviceToHost),
             [bytes] { return "cudaMemcpy of " + std::to_string(bytes) + " bytes to the host"; });
}

void CudaMemory::copy(void* dst, const void* src, std::size_t bytes) {
  check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice),
             [bytes] { return "cudaMemcpy of " + std::to_string(bytes) + " bytes within the GPU"; });
}

void CudaMemory::copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                           std::size_t row_bytes, std::size_t rows) {
  check_cuda(cudaMemcpy2D(dst, dst_pitch, src, src_pitch, row_bytes, rows, cudaMemcpyDeviceToDevice), [=] {
    return "cudaMemcpy2D of " + std::to_string(rows) + " rows of " + std::to_string(row_bytes) + " bytes within the GPU";
  });
}

void CudaMemory::zero(void* dst, std::size_t bytes) {
  check_cuda(cudaMemset(dst, 0, bytes), [bytes] { return "cudaMemset of " + std::to_string(bytes) + " bytes"; });
}

}  // namespace altgrad::ops::cuda
