#include "model/config.hpp"

#include <cstdint>
#include <limits>
#include <stdexcept>

namespace altgrad::model {
namespace {

constexpr std::size_t kSwigluMultipleOf = 8;

// BLAS takes dimensions as int, and every GEMM dimension of the model is one of these products
// with B·T; keeping each under 2^31 (B·T is checked where the activations are sized).
constexpr std::size_t kMaxDimension = static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());

void require_positive(std::vector<std::string>& errors, const char* key, std::size_t value) {
  if (value == 0) errors.push_back(std::string(key) + " must be positive, got 0");
}

void require_dimension(std::vector<std::string>& errors, const char* key, std::size_t value) {
  if (value > kMaxDimension) {
    errors.push_back(std::string(key) + " = " + std::to_string(value) + " exceeds the BLAS limit of " +
                     std::to_string(kMaxDimension));
  }
}

}  // namespace

std::size_t default_mlp_hidden(Mlp mlp, std::size_t n_embd) {
  if (mlp == Mlp::gelu) return 4 * n_embd;
  const std::size_t two_thirds = 2 * (4 * n_embd) / 3;
  return (two_thirds + kSwigluMultipleOf - 1) / kSwigluMultipleOf * kSwigluMultipleOf;
}

std::size_t hidden_size(const GptConfig& config) {
  return config.mlp_hidden != 0 ? config.mlp_hidden : default_mlp_hidden(config.mlp, config.n_embd);
}

std::size_t mlp_inner_size(const GptConfig& config) {
  return config.mlp == Mlp::swiglu ? 2 * hidden_size(config) : hidden_size(config);
}

std::vector<std::string> config_errors(const GptConfig& config) {
  std::vector<std::string> errors;
  require_positive(errors, "n_layer", config.n_layer);
  require_positive(errors, "n_head", config.n_head);
  require_positive(errors, "n_embd", config.n_embd);
  require_positive(errors, "block_size", config.block_size);
  require_positive(errors, "vocab_size", config.vocab_size);
  if (config.n_head != 0 && config.n_embd % config.n_head != 0) {
    errors.push_back("n_embd = " + std::to_string(config.n_embd) + " is not divisible by n_head = " +
                     std::to_string(config.n_head) + " (each head gets n_embd / n_head channels)");
  }
  require_dimension(errors, "n_embd", 3 * config.n_embd);
  require_dimension(errors, "vocab_size", config.vocab_size);
  require_dimension(errors, "block_size", config.block_size);
  require_dimension(errors, "mlp_hidden", 2 * config.mlp_hidden);
  return errors;
}

void validate(const GptConfig& config) {
  const std::vector<std::string> errors = config_errors(config);
  if (errors.empty()) return;
  std::string message = "invalid GPT config:";
  for (const std::string& error : errors) message += "\n  " + error;
  throw std::invalid_argument(message);
}

std::optional<Norm> parse_norm(std::string_view name) {
  if (name == "layernorm") return Norm::layernorm;
  if (name == "rmsnorm") return Norm::rmsnorm;
  return std::nullopt;
}

std::optional<Mlp> parse_mlp(std::string_view name) {
  if (name == "gelu") return Mlp::gelu;
  if (name == "swiglu") return Mlp::swiglu;
  return std::nullopt;
}

std::string_view to_string(Norm norm) { return norm == Norm::layernorm ? "layernorm" : "rmsnorm"; }

std::string_view to_string(Mlp mlp) { return mlp == Mlp::gelu ? "gelu" : "swiglu"; }

}  // namespace altgrad::model
