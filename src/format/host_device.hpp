#pragma once
// Marks functions that must compile for both the host (C++) and the device (CUDA), so the format
// semantics have one source of truth on every backend.
#if defined(__CUDACC__)
#define ALTGRAD_HD __host__ __device__
#else
#define ALTGRAD_HD
#endif
