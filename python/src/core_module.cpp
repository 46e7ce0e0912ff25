// altgrad._core: the engine's formats and quantizer for numpy arrays (python/altgrad/__init__.py
// documents the Python side). Inputs are read where they lie (float32, C-contiguous, no copy); each
// call allocates its one output array, and the kernels run without the GIL on the engine's threads.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "format/codec.hpp"
#include "format/grid.hpp"
#include "format/parse.hpp"
#include "format/philox.hpp"
#include "quant/mx.hpp"
#include "quant/point_settings.hpp"
#include "quant/quantize.hpp"
#include "quant/scaling.hpp"
#include "quant/tiles.hpp"

namespace py = pybind11;

namespace altgrad::python {
namespace {

using FloatArray = py::array_t<float, py::array::c_style>;

// A format as Python sees it: the engine's Format and the name it prints.
struct PyFormat {
  format::Format format;
  std::string name;
};

PyFormat make_format(const std::string& text, std::optional<bool> saturate = std::nullopt) {
  format::FormatSpec spec = format::parse_format(text);
  if (saturate) spec.overflow = *saturate ? format::Overflow::saturate : format::Overflow::special;
  if (const std::string why = format::validation_error(spec); !why.empty()) throw format::FormatError(why);
  return {format::make_format(spec), format::format_name(spec)};
}

format::Rounding rounding_of(const std::string& name) {
  if (const auto r = format::parse_rounding(name)) return *r;
  std::string valid;
  for (const auto n : format::kRoundingNames) valid += (valid.empty() ? "" : ", ") + std::string(n);
  throw py::value_error("unknown rounding '" + name + "'; valid: " + valid);
}

std::span<const float> values_of(const FloatArray& x) { return {x.data(), static_cast<std::size_t>(x.size())}; }

FloatArray like(const FloatArray& x) {
  return FloatArray(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
}

// Every finite value, ascending, zero once.
FloatArray values(const PyFormat& p) {
  std::vector<float> out;
  for (std::uint32_t code = 0; code < p.format.code_count(); ++code) {
    const float v = format::decode(p.format, code);
    if (std::isfinite(v)) out.push_back(v == 0.0f ? 0.0f : v);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  FloatArray result(static_cast<py::ssize_t>(out.size()));
  std::copy(out.begin(), out.end(), result.mutable_data());
  return result;
}

// Codes in the narrowest unsigned type that holds the format's width.
template <typename Code>
py::array encode_as(const PyFormat& p, const FloatArray& x, format::Rounding rounding, std::uint64_t seed,
                    std::uint64_t stream) {
  py::array_t<Code> out(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
  const float* in = x.data();
  Code* codes = out.mutable_data();
  const auto n = static_cast<std::size_t>(x.size());
  {
    py::gil_scoped_release release;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t word = format::is_stochastic(rounding) ? format::philox_word(seed, stream, i) : 0u;
      codes[i] = static_cast<Code>(format::encode(p.format, rounding, in[i], word));
    }
  }
  return out;
}

py::array encode(const PyFormat& p, const FloatArray& x, const std::string& rounding, std::uint64_t seed,
                 std::uint64_t stream) {
  const format::Rounding r = rounding_of(rounding);
  if (p.format.width <= 8) return encode_as<std::uint8_t>(p, x, r, seed, stream);
  if (p.format.width <= 16) return encode_as<std::uint16_t>(p, x, r, seed, stream);
  return encode_as<std::uint32_t>(p, x, r, seed, stream);
}

FloatArray decode(const PyFormat& p, const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& codes) {
  FloatArray out(std::vector<py::ssize_t>(codes.shape(), codes.shape() + codes.ndim()));
  const std::int64_t* in = codes.data();
  for (py::ssize_t i = 0; i < codes.size(); ++i) {
    if (in[i] < 0 || static_cast<std::uint64_t>(in[i]) >= p.format.code_count()) {
      throw py::value_error("code " + std::to_string(in[i]) + " at index " + std::to_string(i) + " is not a code of " +
                            p.name + " (0 to " + std::to_string(p.format.code_count() - 1) + ")");
    }
    out.mutable_data()[i] = format::decode(p.format, static_cast<std::uint32_t>(in[i]));
  }
  return out;
}

// S(x): the grid step at x away from zero, as the bit-space optimizers use it (docs/optimizers.md).
FloatArray spacing(const PyFormat& p, const FloatArray& x) {
  FloatArray out = like(x);
  for (py::ssize_t i = 0; i < x.size(); ++i) out.mutable_data()[i] = format::spacing(p.format, x.data()[i]);
  return out;
}

// The block options of quantize(), checked as a recipe's are (recipe/recipe_spec.hpp): a scale
// rule only where the scale format takes one.
quant::MxOptions block_options(const std::string& scale_format, const std::optional<std::string>& scale_rule) {
  quant::MxOptions options;
  const auto format = quant::parse_scale_format(scale_format);
  if (!format) throw py::value_error("unknown scale_format '" + scale_format + "'; valid: e8m0, fp32, fp32_pow2, e4m3");
  options.scale_format = *format;
  if (!scale_rule) return options;
  if (!quant::takes_scale_rule(*format)) {
    throw py::value_error("scale_rule = " + *scale_rule + " does not apply to scale_format = " + scale_format +
                          ", whose scale has no rule to choose; remove scale_rule or use e8m0");
  }
  const auto rule = quant::parse_scale_rule(*scale_rule);
  if (!rule) throw py::value_error("unknown scale_rule '" + *scale_rule + "'; valid: floor, round_up, ceil, even");
  options.rule = *rule;
  return options;
}

// quantize(): per-tensor ("none": the given scale; "tensor": the scale of x's own amax, as current
// scaling computes it) or blocks along the last axis ("block"; MX unless scale_format says otherwise).
py::tuple quantize(const FloatArray& x, const std::string& format_name, const std::string& rounding,
                   const std::string& scaling, std::optional<float> scale, std::size_t block, std::uint64_t seed,
                   std::uint64_t stream, bool saturate, int margin, bool codes, std::optional<FloatArray> into,
                   const std::optional<std::string>& scale_rule, const std::string& scale_format, int sr_bits,
                   bool tile) {
  const PyFormat p = make_format(format_name, saturate);
  const format::Rounding r = rounding_of(rounding);
  if (sr_bits < 1 || sr_bits > quant::kMaxRandomBits) {
    throw py::value_error("sr_bits = " + std::to_string(sr_bits) + " is outside [1, 32]");
  }
  if (sr_bits != quant::kMaxRandomBits && r != format::Rounding::stochastic) {
    throw py::value_error("sr_bits applies to rounding='stochastic', not '" + rounding + "'");
  }
  if (into && into->size() != x.size()) {
    throw py::value_error("out has " + std::to_string(into->size()) + " elements, x has " + std::to_string(x.size()));
  }
  FloatArray out = into ? *into : like(x);
  const std::span<const float> in = values_of(x);
  const std::span<float> y(out.mutable_data(), in.size());
  if (scaling == "block") {
    if (scale) throw py::value_error("scale is chosen per block under scaling='block'; do not pass scale");
    if (x.ndim() == 0 || block == 0) {
      throw py::value_error("scaling='block' needs an array of at least one axis and a block of at least 1, got block " +
                            std::to_string(block));
    }
    quant::MxOptions options = block_options(scale_format, scale_rule);
    options.block_size = block;
    options.rounding = r;
    options.seed = seed;
    options.stream = stream;
    options.random_bits = sr_bits;
    const auto row = static_cast<std::size_t>(x.shape(x.ndim() - 1));
    if (tile && (x.ndim() < 2 || block > quant::kMaxTile)) {
      throw py::value_error("tile=True needs a matrix (at least two axes) and block <= " +
                            std::to_string(quant::kMaxTile) + ", got " + std::to_string(x.ndim()) + " axes and block " +
                            std::to_string(block));
    }
    quant::MxStats stats;
    {
      py::gil_scoped_release release;
      stats = tile ? quant::quantize_tiles(p.format, in, y, row, options) : quant::quantize_mx(p.format, in, y, row, options);
    }
    py::dict d = stats_dict(stats.elements);
    d["blocks"] = stats.blocks;
    d["clipped_blocks"] = stats.clipped_blocks;
    return py::make_tuple(out, d);
  }
  const bool power_of_two = scaling == "tensor" && scale_format == "fp32_pow2";
  if (scale_rule || tile || (scale_format != "e8m0" && !power_of_two)) {
    throw py::value_error("scale_rule, tile and scale_format apply to scaling='block' (and scale_format='fp32_pow2' to "
                          "scaling='tensor'), not '" + scaling + "'");
  }
  float s = 1.0f;
  if (scaling == "tensor") {
    if (scale) throw py::value_error("scaling='tensor' takes its scale from x's amax; do not pass scale");
    py::gil_scoped_release release;
    s = quant::per_tensor_scale(power_of_two ? quant::BlockScaleFormat::fp32_pow2 : quant::BlockScaleFormat::fp32,
                                quant::current_scale(p.format, in, margin));
  } else if (scaling == "none") {
    s = scale.value_or(1.0f);
    if (!(s > 0.0f) || !std::isfinite(s)) throw py::value_error("scale must be positive and finite, got " + std::to_string(s));
  } else {
    throw py::value_error("unknown scaling '" + scaling + "'; valid: none, tensor, block");
  }
  quant::QuantizeOptions options;
  options.rounding = r;
  options.scale = s;
  options.seed = seed;
  options.stream = stream;
  options.random_bits = sr_bits;
  // The histogram costs a second pass over x (the engine takes it on diagnostic steps only).
  std::vector<std::uint64_t> histogram(codes && p.format.width <= 8 ? p.format.code_count() : 0);
  options.code_histogram = histogram;
  quant::QuantStats stats;
  {
    py::gil_scoped_release release;
    stats = quant::quantize(p.format, in, y, options);
  }
  py::dict d = stats_dict(stats);
  d["scale"] = s;
  if (!histogram.empty()) {
    d["codes_used"] = std::count_if(histogram.begin(), histogram.end(), [](std::uint64_t c) { return c > 0; });
    py::array_t<std::uint64_t> h(static_cast<py::ssize_t>(histogram.size()));
    std::copy(histogram.begin(), histogram.end(), h.mutable_data());
    d["code_histogram"] = h;
  }
  return py::make_tuple(out, d);
}

std::vector<std::string> format_names() {
  std::vector<std::string> out;
  for (const auto& named : format::named_formats()) out.emplace_back(named.name);
  return out;
}

}  // namespace

py::dict stats_dict(const quant::QuantStats& s) {
  py::dict d;
  d["count"] = s.count;
  d["overflow"] = s.overflow;
  d["underflow"] = s.underflow;
  d["nan_inputs"] = s.nan_inputs;
  d["inf_inputs"] = s.inf_inputs;
  d["zero_inputs"] = s.zero_inputs;
  d["amax"] = s.amax;
  d["rel_error"] = s.relative_error();
  return d;
}

}  // namespace altgrad::python

PYBIND11_MODULE(_core, m) {
  using namespace altgrad;
  using namespace altgrad::python;
  m.doc() = "AltGrad's number formats and quantizer (the C++ engine), for numpy float32 arrays";
  py::register_exception<format::FormatError>(m, "FormatError", PyExc_ValueError);

  m.def("formats", &format_names, "The named formats, in the order `altgrad formats` lists them");

  py::class_<PyFormat>(m, "Format", "A number format, by the engine's grammar: e4m3, e5m2fnuz,bias=16, ...")
      .def(py::init([](const std::string& name) { return make_format(name); }), py::arg("name"))
      .def_property_readonly("name", [](const PyFormat& p) { return p.name; })
      .def_property_readonly("bits", [](const PyFormat& p) { return p.format.width; })
      .def_property_readonly("exponent_bits", [](const PyFormat& p) { return p.format.spec.exponent_bits; })
      .def_property_readonly("mantissa_bits", [](const PyFormat& p) { return p.format.spec.mantissa_bits; })
      .def_property_readonly("bias", [](const PyFormat& p) { return p.format.spec.bias; })
      .def_property_readonly("policy", [](const PyFormat& p) { return std::string(format::policy_name(p.format.spec.policy)); })
      .def_property_readonly("subnormals", [](const PyFormat& p) { return p.format.spec.subnormals; })
      .def_property_readonly("saturates", [](const PyFormat& p) { return p.format.spec.overflow == format::Overflow::saturate; })
      .def_property_readonly("has_inf", [](const PyFormat& p) { return p.format.has_inf; })
      .def_property_readonly("has_nan", [](const PyFormat& p) { return p.format.has_nan; })
      .def_property_readonly("has_negative_zero", [](const PyFormat& p) { return p.format.has_negative_zero; })
      .def_property_readonly("max_finite", [](const PyFormat& p) { return p.format.max_finite(); })
      .def_property_readonly("min_normal", [](const PyFormat& p) { return p.format.min_normal(); })
      .def_property_readonly("min_subnormal",
                             [](const PyFormat& p) -> py::object {
                               // None where the format has no subnormals (E7M0, E8M0), as `altgrad formats` says.
                               const double smallest = format::grid_facts(p.format).min_subnormal;
                               return smallest > 0 ? py::cast(smallest) : py::none();
                             })
      .def("values", &values, "Every finite value, ascending (zero once)")
      .def("encode", &encode, py::arg("x").noconvert(), py::arg("rounding") = "nearest", py::arg("seed") = 0,
           py::arg("stream") = 0, "float32 array -> codes (uint8 for formats of up to 8 bits)")
      .def("decode", &decode, py::arg("codes"), "codes -> float32 values")
      .def("spacing", &spacing, py::arg("x").noconvert(), "S(x): the grid step at x away from zero")
      .def("__repr__", [](const PyFormat& p) { return "altgrad.Format('" + p.name + "')"; });

  m.def("quantize", &quantize, py::arg("x").noconvert(), py::arg("format"), py::arg("rounding") = "nearest",
        py::arg("scaling") = "none", py::arg("scale") = py::none(), py::arg("block") = 32, py::arg("seed") = 0,
        py::arg("stream") = 0, py::arg("saturate") = true, py::arg("margin") = 0, py::arg("codes") = false,
        py::arg("out").noconvert() = py::none(), py::arg("scale_rule") = py::none(), py::arg("scale_format") = "e8m0",
        py::arg("sr_bits") = quant::kMaxRandomBits, py::arg("tile") = false,
        "Fake-quantizes x: returns (dequantized float32 array, statistics of the same pass)");
  bind_points(m);
  bind_gemm(m);
  bind_hadamard(m);
}
