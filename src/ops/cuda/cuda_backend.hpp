#pragma once
// The CUDA engine behind the backend seam (ops/backend.hpp): the GPU's memory (cuda_memory.hpp) and
// the kernels of ops/cuda/, each held to the CPU reference of the same name by
// tests/ops/backend_parity_test.cpp. Float only: double is the CPU's, for gradient checks.
//
// One GPU, the current device (device 0 unless the process chose another before the first call);
// every kernel and copy on its default stream. A plain C++ header: ops/backend.cpp includes it in
// builds with the CUDA engine (ALTGRAD_CUDA defined).
#include "ops/backend.hpp"

namespace altgrad::ops::cuda {

// The process-wide CUDA backend, created on the first call. Throws std::runtime_error "no CUDA
// device: cudaGetDeviceCount ..." with CUDA's description where the process sees no GPU (a later
// call tries again), and naming the failed call where the GPU's libraries cannot start.
Backend<float> backend();

}  // namespace altgrad::ops::cuda
