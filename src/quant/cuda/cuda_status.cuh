#pragma once
// CUDA runtime failures as std::runtime_error: "<caller>: <step>: <CUDA's description>", where
// caller names the quantizer's entry point and step what of it failed. Nothing is built unless the
// call failed: a successful check in the step loop allocates nothing.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace altgrad::quant::cuda {

inline void check_cuda(cudaError_t status, const char* caller, const char* step) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(caller) + ": " + step + ": " + cudaGetErrorString(status));
  }
}

}  // namespace altgrad::quant::cuda
