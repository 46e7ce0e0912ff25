#include "train/optimizer_assignment.hpp"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "io/atomic_file.hpp"

namespace altgrad::train {
namespace {

// Optimizers hold FP32 hyperparameters; written as the shortest decimal that reads back as the same
// float, `0.9` rather than `0.8999999761581421`.
nlohmann::json float_number(double value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, static_cast<float>(value)).ptr;
  return std::stod(std::string(buffer, end));
}

std::size_t range_of(const optim::Optimizer& optimizer, const model::TensorSpec& spec) {
  const auto ranges = optimizer.ranges();
  const auto found = std::find_if(ranges.begin(), ranges.end(), [&](const optim::ParameterRange& r) {
    return spec.slot.offset >= r.offset && spec.slot.offset + spec.slot.size <= r.offset + r.size;
  });
  if (found == ranges.end()) throw std::invalid_argument("optimizer.json: tensor " + spec.name + " lies in no optimizer range");
  return static_cast<std::size_t>(found - ranges.begin());
}

// {"exp_avg": {"format": "e4m3", "group": 128}}: the state kept as codes with per-group scales.
nlohmann::json quantized_state_json(const optim::Optimizer& optimizer) {
  nlohmann::json entries = nlohmann::json::object();
  for (const auto& t : optimizer.quantized_state()) {
    entries[t.name()] = {{"format", t.format_name()}, {"group", t.groups().group_size()}};
  }
  return entries;
}

}  // namespace

// Whether a bit-space optimizer updates the tensor, rather than AdamW: matmul weights, and the
// embeddings when grid_embeddings says so; never norm gains or biases.
static bool on_grid(const model::TensorSpec& spec, const config::TrainConfig& c) {
  return model::is_matmul_weight(spec.role) || (spec.role == model::ParameterRole::embedding && c.grid_embeddings);
}

std::vector<optim::ParameterRange> parameter_ranges(const model::ParameterLayout& layout, const config::TrainConfig& c) {
  std::vector<optim::ParameterRange> ranges;
  for (const auto& spec : layout.tensors()) {
    // nanoGPT decays every tensor of two or more dimensions: embeddings and Linear weights.
    const bool adamw_only = optim::is_bit_space(c.optimizer) && !on_grid(spec, c);
    ranges.push_back({spec.slot.offset, spec.slot.size, spec.shape.size() >= 2, adamw_only});
  }
  return ranges;
}

optim::OptimizerSpec optimizer_spec(const config::TrainConfig& c) {
  optim::OptimizerSpec spec;
  spec.kind = c.optimizer;
  spec.adamw = {static_cast<float>(c.beta1), static_cast<float>(c.beta2), 1e-8f, static_cast<float>(c.weight_decay)};
  spec.moments = {c.adam_m_format, c.adam_v_format, static_cast<std::size_t>(c.adam_state_group), c.adam_state_rounding,
                  c.seed};
  spec.sgd = {static_cast<float>(c.momentum), c.nesterov, static_cast<float>(c.weight_decay)};
  spec.bit_space = {c.stiffness_power,
                    c.precondition,
                    static_cast<float>(c.madam_p_scale),
                    static_cast<float>(c.madam_g_bound),
                    static_cast<float>(c.madam_beta),
                    c.adamw_learning_rate > 0.0 ? c.adamw_learning_rate / c.learning_rate : 1.0,
                    c.seed};
  return spec;
}

void write_optimizer_assignment(const std::filesystem::path& path, const optim::Optimizer& optimizer,
                                const model::ParameterLayout& layout, const precision::WeightGrids* grids) {
  nlohmann::json hyperparameters = nlohmann::json::object();
  for (const auto& h : optimizer.hyperparameters()) hyperparameters[h.name] = float_number(h.value);
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& spec : layout.tensors()) {
    const std::size_t index = range_of(optimizer, spec);
    const optim::ParameterRange& range = optimizer.ranges()[index];
    nlohmann::json entry = {{"name", spec.name},
                            {"optimizer", range.adamw_only ? std::string_view("adamw") : optimizer.name()},
                            {"decay", range.decay},
                            {"numel", spec.slot.size}};
    if (grids && optimizer.uses_grids() && !range.adamw_only) entry["grid"] = grids->describe(index);
    tensors.push_back(std::move(entry));
  }
  nlohmann::json json = {{"optimizer", optimizer.name()},
                               {"hyperparameters", hyperparameters},
                               {"state", [&] {
                                  nlohmann::json names = nlohmann::json::array();
                                  for (const auto& t : optimizer.state()) names.push_back(t.name);
                                  for (const auto& t : optimizer.quantized_state()) names.push_back(t.name());
                                  return names;
                                }()},
                               {"tensors", tensors}};
  if (!optimizer.quantized_state().empty()) json["quantized_state"] = quantized_state_json(optimizer);
  io::write_file_atomically(path, [&](std::ostream& out) { out << json.dump(2) << '\n'; });
}

}  // namespace altgrad::train
