#pragma once
// What the files of altgrad._core share: core_module.cpp defines the module (formats, quantize)
// and calls each other file's registration function.
#include <pybind11/pybind11.h>

#include "quant/stats.hpp"

namespace altgrad::python {

// The statistics of one quantization pass as a dict (count, overflow, underflow, ..., rel_error).
pybind11::dict stats_dict(const quant::QuantStats& stats);

// resolve_recipe, PointSettings and PointQuantizer: what altgrad.torch.quantize_model is built on.
void bind_points(pybind11::module_& module);

// gemm: the emulated tensor-core GEMM (ops/cpu/emulated_gemm.hpp).
void bind_gemm(pybind11::module_& module);

// hadamard: the randomized Hadamard transform (quant/hadamard.hpp).
void bind_hadamard(pybind11::module_& module);

}  // namespace altgrad::python
