#pragma once
// ALTGRAD_OPS_HD marks a function that both the host (C++) and the GPU (CUDA) compile: the
// per-element and per-row arithmetic of the CUDA kernels, which tests/ops/cuda_math_test.cpp
// compiles on the host and holds to the CPU kernels' bits, without a GPU. format/ has its own
// macro (format/host_device.hpp), which the ops layer cannot see.
//
// The same source gives the same bits on both only where neither compiler contracts a product and
// a sum into a fused multiply-add on its own: AltGrad's C++ builds pass -ffp-contract=off and
// altgrad_ops_cuda passes nvcc --fmad=false (src/CMakeLists.txt). Where a sum is meant to be
// fused, as the CPU's GEMM fuses it, the function calls fmaf itself.
#if defined(__CUDACC__)
#define ALTGRAD_OPS_HD __host__ __device__
#else
#define ALTGRAD_OPS_HD
#endif
