#pragma once
// The shape of a GPT, with nanoGPT's knob names (model.py's GPTConfig) plus the two architecture
// switches AltGrad studies: the normalization and the MLP.
//
// No dropout: every run here is dropout = 0, as nanoGPT's default, so forward and backward are
// deterministic functions of parameters and tokens.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace altgrad::model {

// nanoGPT's LayerNorm (eps 1e-5, bias when `bias`), or RMSNorm (weight only, eps 1e-5; a PyTorch
// torch.nn.RMSNorm must be built with eps=1e-5 to match: its default eps is the dtype's epsilon).
enum class Norm { layernorm, rmsnorm };

// nanoGPT's MLP: c_fc -> exact GELU -> c_proj; or SwiGLU: c_fc (2H outputs, [gate | value]) ->
// silu(gate)·value -> c_proj. See parameter_layout.hpp for how c_fc maps to LLaMA's w1 and w3.
enum class Mlp { gelu, swiglu };

inline constexpr double kNormEps = 1e-5;

struct GptConfig {
  // Defaults: nanoGPT's config/train_shakespeare_char.py (a ~10M-parameter character model), with
  // byte-level tokens.
  std::size_t n_layer = 6;
  std::size_t n_head = 6;
  std::size_t n_embd = 384;
  std::size_t block_size = 256;
  std::size_t vocab_size = 256;  // byte-level
  bool bias = false;             // biases in Linears and LayerNorms (GPT-2: true)
  Norm norm = Norm::layernorm;
  Mlp mlp = Mlp::gelu;
  // MLP hidden width H; 0 means the default for `mlp`: see default_mlp_hidden.
  std::size_t mlp_hidden = 0;

  bool operator==(const GptConfig&) const = default;
};

// The default hidden width of the MLP:
//   gelu:   4·n_embd (nanoGPT)
//   swiglu: 4·n_embd·2/3 rounded down to an integer, then up to a multiple of 8 (LLaMA's rule with
//           multiple_of = 8): the 2/3 keeps the parameter count of a 4·n_embd GELU MLP, since the
//           SwiGLU up-projection has two halves. n_embd 384 -> 1024, 768 -> 2048, 8 -> 24.
std::size_t default_mlp_hidden(Mlp mlp, std::size_t n_embd);

// mlp_hidden, or the default when it is 0.
std::size_t hidden_size(const GptConfig& config);

// Width of c_fc's output: H for gelu, 2H for swiglu.
std::size_t mlp_inner_size(const GptConfig& config);

inline std::size_t head_size(const GptConfig& config) { return config.n_embd / config.n_head; }

// Every problem with a config, each a sentence naming the key and its value; empty when valid.
std::vector<std::string> config_errors(const GptConfig& config);

// Throws std::invalid_argument listing config_errors when there are any.
void validate(const GptConfig& config);

// "layernorm" | "rmsnorm", "gelu" | "swiglu"; nullopt for any other name.
std::optional<Norm> parse_norm(std::string_view name);
std::optional<Mlp> parse_mlp(std::string_view name);
std::string_view to_string(Norm norm);
std::string_view to_string(Mlp mlp);

}  // namespace altgrad::model
