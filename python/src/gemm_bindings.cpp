// altgrad.gemm: the engine's emulated tensor-core GEMM (ops/cpu/emulated_gemm.hpp) for numpy
// arrays, so that a researcher can hold the accumulator models against their own GPU.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "format/accumulator.hpp"
#include "format/codec.hpp"
#include "format/parse.hpp"
#include "ops/cpu/emulated_gemm.hpp"

namespace py = pybind11;

namespace altgrad::python {
namespace {

// An operand's values in float32, row-major (rows, K): decoded from codes, or float32 values that
// its format represents exactly.
std::vector<float> operand_values(const py::array& x, const format::Format& f, const std::string& what,
                                  const std::string& format_name, std::size_t& rows, std::size_t& cols) {
  if (x.ndim() != 2) throw py::value_error(what + " must be a 2-D array (rows, K), got " + std::to_string(x.ndim()) + " dimensions");
  rows = static_cast<std::size_t>(x.shape(0));
  cols = static_cast<std::size_t>(x.shape(1));
  std::vector<float> values(rows * cols);
  if (py::isinstance<py::array_t<std::uint8_t>>(x)) {
    if (f.width > 8) throw py::value_error(what + " holds uint8 codes, but " + format_name + " is not an 8-bit format");
    const auto codes = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>::ensure(x);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = format::decode(f, codes.data()[i]);
    return values;
  }
  if (!py::isinstance<py::array_t<float>>(x)) {
    throw py::type_error(what + " must be uint8 codes or float32 values, got " + std::string(py::str(x.dtype())));
  }
  const auto floats = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(x);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float v = floats.data()[i];
    if (std::isfinite(v) && format::decode(f, format::encode(f, format::Rounding::nearest_even, v)) != v) {
      throw py::value_error(what + "[" + std::to_string(i / cols) + ", " + std::to_string(i % cols) + "] = " +
                            std::to_string(v) + " is not a value of " + format_name);
    }
    values[i] = v;
  }
  return values;
}

py::array_t<float> gemm(const py::array& a, const py::array& bt, std::optional<std::string> a_format,
                        std::optional<std::string> b_format, const std::string& accumulate, float scale_a,
                        float scale_b, const std::string& out_dtype) {
  const format::AccumulatorModel model = format::parse_accumulator(accumulate);
  if (!model.emulated()) throw py::value_error("accumulate=\"fp32\" is the float GEMM; gemm() emulates tensor cores");
  if (out_dtype != "float32" && out_dtype != "bfloat16") {
    throw py::value_error("out_dtype must be \"float32\" or \"bfloat16\", got \"" + out_dtype + "\"");
  }
  // Codes default to E4M3, float values to BF16.
  const auto default_format = [](const py::array& x) { return py::isinstance<py::array_t<std::uint8_t>>(x) ? "e4m3" : "bf16"; };
  const std::string a_name = a_format.value_or(default_format(a)), b_name = b_format.value_or(default_format(bt));
  const format::Format fa = format::make_format(format::parse_format(a_name));
  const format::Format fb = format::make_format(format::parse_format(b_name));
  std::size_t m = 0, ka = 0, n = 0, kb = 0;
  const std::vector<float> av = operand_values(a, fa, "a", a_name, m, ka);
  const std::vector<float> bv = operand_values(bt, fb, "bt", b_name, n, kb);
  if (ka != kb) throw py::value_error("a is (" + std::to_string(m) + ", " + std::to_string(ka) + ") and bt is (" +
                                      std::to_string(n) + ", " + std::to_string(kb) + "): K differs");
  py::array_t<float> out({static_cast<py::ssize_t>(m), static_cast<py::ssize_t>(n)});
  float* c = out.mutable_data();
  {
    py::gil_scoped_release release;
    // B (K, N) is Bᵀ read down its columns: element (k, j) at bt[j · K + k].
    ops::cpu::emulated_gemm(model, m, n, ka, {av.data(), ka, 1, fa.min_normal_exp}, {bv.data(), 1, ka, fb.min_normal_exp},
                            scale_a * scale_b, false, c, n);
    if (out_dtype == "bfloat16") {
      for (std::size_t i = 0; i < m * n; ++i) c[i] = ops::cpu::round_to_bf16(c[i]);
    }
  }
  return out;
}

}  // namespace

void bind_gemm(py::module_& module) {
  py::register_exception<format::AccumulatorError>(module, "AccumulatorError", PyExc_ValueError);
  module.def("gemm", &gemm, py::arg("a"), py::arg("bt"), py::arg("a_format") = py::none(),
             py::arg("b_format") = py::none(), py::arg("accumulate") = "hopper", py::arg("scale_a") = 1.0f,
             py::arg("scale_b") = 1.0f, py::arg("out_dtype") = "float32",
             "out[i, j] = scale_a·scale_b · Σ_k a[i, k]·bt[j, k] under an accumulator model (docs/accumulation.md)");
}

}  // namespace altgrad::python
