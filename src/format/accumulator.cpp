#include "format/accumulator.hpp"

#include <charconv>
#include <string>
#include <vector>

namespace altgrad::format {
namespace {

constexpr std::string_view kForms =
    "fp32, hopper, hopper_fast, hopper_bf16, or aligned[,group=G][,bits=B][,acc=A][,cut=truncate|nearest]"
    "[,promote=P|none][,split=S][,inputs=format|bf16]";

[[noreturn]] void fail(std::string_view text, const std::string& why) {
  throw AccumulatorError("accumulator \"" + std::string(text) + "\": " + why + " (valid: " + std::string(kForms) +
                         ")");
}

std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return parts;
    start = comma + 1;
  }
}

long long integer_knob(std::string_view text, std::string_view key, std::string_view value, long long lo,
                       long long hi) {
  long long parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc{} || end != value.data() + value.size() || parsed < lo || parsed > hi) {
    fail(text, std::string(key) + " = \"" + std::string(value) + "\" is not an integer in [" + std::to_string(lo) +
                   ", " + std::to_string(hi) + "]");
  }
  return parsed;
}

void apply_knob(AccumulatorModel& model, std::string_view text, std::string_view knob) {
  const std::size_t equals = knob.find('=');
  if (equals == std::string_view::npos) fail(text, "\"" + std::string(knob) + "\" is not key=value");
  const std::string_view key = knob.substr(0, equals), value = knob.substr(equals + 1);
  if (key == "group") {
    model.group = static_cast<std::size_t>(integer_knob(text, key, value, 1, kMaxGroup));
  } else if (key == "bits") {
    model.bits = static_cast<int>(integer_knob(text, key, value, 0, kMaxBits));
  } else if (key == "acc") {
    model.acc = static_cast<int>(integer_knob(text, key, value, 1, kMaxAccBits));
  } else if (key == "promote") {
    model.promote = value == "none" ? 0 : static_cast<std::size_t>(integer_knob(text, key, value, 1, 1 << 30));
  } else if (key == "split") {
    model.split = static_cast<std::size_t>(integer_knob(text, key, value, 1, 1024));
  } else if (key == "cut") {
    if (value != "truncate" && value != "nearest") fail(text, "cut = \"" + std::string(value) + "\"");
    model.cut = value == "truncate" ? AccumulatorModel::Cut::truncate : AccumulatorModel::Cut::nearest;
  } else if (key == "inputs") {
    if (value != "format" && value != "bf16") fail(text, "inputs = \"" + std::string(value) + "\"");
    model.inputs = value == "format" ? AccumulatorModel::Inputs::format : AccumulatorModel::Inputs::bf16;
  } else {
    fail(text, "unknown knob \"" + std::string(key) + "\"");
  }
}

}  // namespace

AccumulatorModel hopper_fp8(bool fast_accumulation) {
  AccumulatorModel model;
  model.kind = AccumulatorModel::Kind::aligned;
  model.group = 32;  // one FP8 wgmma step: k = 32
  model.bits = 13;
  model.acc = 14;
  model.promote = fast_accumulation ? 0 : 128;  // cuBLAS promotes once per 128-long k-tile
  return model;
}

AccumulatorModel hopper_bf16() {
  AccumulatorModel model;
  model.kind = AccumulatorModel::Kind::aligned;
  model.group = 16;  // one BF16 wgmma step: k = 16
  model.bits = 25;
  model.acc = 24;
  model.inputs = AccumulatorModel::Inputs::bf16;
  return model;
}

AccumulatorModel parse_accumulator(std::string_view text) {
  if (text == "fp32") return {};
  if (text == "hopper") return hopper_fp8(false);
  if (text == "hopper_fast") return hopper_fp8(true);
  if (text == "hopper_bf16") return hopper_bf16();
  const std::vector<std::string_view> parts = split_commas(text);
  if (parts[0] != "aligned") fail(text, "unknown accumulator \"" + std::string(parts[0]) + "\"");
  AccumulatorModel model = hopper_fp8(true);
  for (std::size_t i = 1; i < parts.size(); ++i) apply_knob(model, text, parts[i]);
  return model;
}

std::string accumulator_name(const AccumulatorModel& model) {
  if (model.kind == AccumulatorModel::Kind::fp32) return "fp32";
  if (model == hopper_fp8(false)) return "hopper";
  if (model == hopper_fp8(true)) return "hopper_fast";
  if (model == hopper_bf16()) return "hopper_bf16";
  return "aligned,group=" + std::to_string(model.group) + ",bits=" + std::to_string(model.bits) +
         ",acc=" + std::to_string(model.acc) +
         ",cut=" + (model.cut == AccumulatorModel::Cut::truncate ? "truncate" : "nearest") +
         ",promote=" + (model.promote == 0 ? std::string("none") : std::to_string(model.promote)) +
         ",split=" + std::to_string(model.split) +
         ",inputs=" + (model.inputs == AccumulatorModel::Inputs::format ? "format" : "bf16");
}

}  // namespace altgrad::format
