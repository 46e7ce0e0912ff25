#include "ops/cuda/device_scratch.hpp"

#include <string>

#include "ops/cuda/cuda_error.cuh"

namespace altgrad::ops::cuda {

DeviceScratch::~DeviceScratch() { cudaFree(data_); }

void* DeviceScratch::bytes(std::size_t bytes) {
  if (bytes <= size_) return data_;
  // cudaFree waits for the kernels that may still read the old buffer.
  check_cuda(cudaFree(data_), [&] { return "cudaFree of " + std::to_string(size_) + " bytes of scratch"; });
  data_ = nullptr;
  size_ = 0;
  check_cuda(cudaMalloc(&data_, bytes), [&] { return "cudaMalloc of " + std::to_string(bytes) + " bytes of scratch"; });
  size_ = bytes;
  return data_;
}

}  // namespace altgrad::ops::cuda
