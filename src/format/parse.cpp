#include "format/parse.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <string>

namespace altgrad::format {
namespace {

constexpr FormatSpec spec(int e, int m, SpecialPolicy p) {
  return FormatSpec{e, m, default_bias(e, p), p, true, Overflow::saturate};
}

constexpr std::array kNamed = {
    NamedFormat{"e4m3", spec(4, 3, SpecialPolicy::fn), "OCP FP8 E4M3 (alias of e4m3fn)"},
    NamedFormat{"e4m3fnuz", spec(4, 3, SpecialPolicy::fnuz), "Graphcore/AMD FP8 E4M3, max 240"},
    NamedFormat{"e5m2", spec(5, 2, SpecialPolicy::ieee), "OCP FP8 E5M2"},
    NamedFormat{"e5m2fnuz", spec(5, 2, SpecialPolicy::fnuz), "Graphcore/AMD FP8 E5M2"},
    NamedFormat{"e3m4", spec(3, 4, SpecialPolicy::ieee), "ml_dtypes float8_e3m4"},
    NamedFormat{"e2m5", spec(2, 5, SpecialPolicy::fn), "alias of e2m5fn"},
    NamedFormat{"e1m6", spec(1, 6, SpecialPolicy::fn), "alias of e1m6fn"},
    NamedFormat{"e7m0", spec(7, 0, SpecialPolicy::fn), "alias of e7m0fn: signed powers of two"},
    NamedFormat{"e8m0fnu", spec(8, 0, SpecialPolicy::fnu), "OCP MX scale E8M0"},
    NamedFormat{"e2m3", spec(2, 3, SpecialPolicy::finite), "OCP MX FP6 E2M3"},
    NamedFormat{"e3m2", spec(3, 2, SpecialPolicy::finite), "OCP MX FP6 E3M2"},
    NamedFormat{"e2m1", spec(2, 1, SpecialPolicy::finite), "OCP MX FP4 E2M1"},
    NamedFormat{"bf16", spec(8, 7, SpecialPolicy::ieee), "bfloat16 (e8m7)"},
    NamedFormat{"fp16", spec(5, 10, SpecialPolicy::ieee), "IEEE binary16 (e5m10)"},
};

constexpr std::string_view kValidForms =
    "valid forms: a named format (e4m3, e4m3fnuz, e5m2, e5m2fnuz, e3m4, e2m5, e1m6, e7m0, e8m0fnu, "
    "e2m3, e3m2, e2m1, bf16, fp16) or e<E>m<M>[fn|fnuz|fnu] with 1 <= E <= 8 and at most 16 bits "
    "in all, optionally followed by ,bias=N ,subnormals=on|off ,overflow=saturate|inf "
    ",policy=ieee|fn|fnuz|finite|fnu";

// `text` with every byte outside printable ASCII written as \xNN: a name quoted in a message can
// hold anything a user typed or a file held, and a NUL would cut the message short.
std::string printable(std::string_view text) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7F) {
      out += c;
    } else {
      out += {'\\', 'x', kHex[byte >> 4], kHex[byte & 0xF]};
    }
  }
  return out;
}

[[noreturn]] void fail(std::string_view text, std::string_view why) {
  throw FormatError("invalid format '" + printable(text) + "': " + printable(why) + "; " + std::string(kValidForms));
}

bool parse_int(std::string_view s, int& out) {
  const auto* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end && !s.empty();
}

bool parse_policy(std::string_view s, SpecialPolicy& out) {
  for (auto p : {SpecialPolicy::ieee, SpecialPolicy::fn, SpecialPolicy::fnuz, SpecialPolicy::finite,
                 SpecialPolicy::fnu}) {
    if (s == policy_name(p)) {
      out = p;
      return true;
    }
  }
  return false;
}

// "e<E>m<M>[suffix]" -> spec with default options.
bool parse_grammar(std::string_view base, FormatSpec& out) {
  for (const auto& named : kNamed) {
    if (base == named.name) {
      out = named.spec;
      return true;
    }
  }
  if (base.size() < 4 || base[0] != 'e') return false;
  const auto m_pos = base.find('m');
  if (m_pos == std::string_view::npos) return false;
  std::size_t digits_end = m_pos + 1;
  while (digits_end < base.size() && base[digits_end] >= '0' && base[digits_end] <= '9') ++digits_end;
  int e = 0, m = 0;
  if (!parse_int(base.substr(1, m_pos - 1), e) ||
      !parse_int(base.substr(m_pos + 1, digits_end - m_pos - 1), m)) {
    return false;
  }
  const std::string_view suffix = base.substr(digits_end);
  SpecialPolicy policy = SpecialPolicy::ieee;
  if (!suffix.empty() && (suffix == "finite" || !parse_policy(suffix, policy))) return false;
  if (e < 1 || e > 8 || m < 0 || m > 23) return false;
  out = spec(e, m, policy);
  return true;
}

void apply_option(std::string_view text, std::string_view option, FormatSpec& s, bool& bias_set) {
  const auto eq = option.find('=');
  if (eq == std::string_view::npos) fail(text, "option '" + std::string(option) + "' is not key=value");
  const auto key = option.substr(0, eq), value = option.substr(eq + 1);
  const auto bad_value = [&] {
    fail(text, "bad value '" + std::string(value) + "' for option '" + std::string(key) + "'");
  };
  if (key == "bias") {
    if (!parse_int(value, s.bias)) bad_value();
    bias_set = true;
  } else if (key == "subnormals") {
    if (value != "on" && value != "off") bad_value();
    s.subnormals = value == "on";
  } else if (key == "overflow") {
    if (value != "saturate" && value != "inf") bad_value();
    s.overflow = value == "saturate" ? Overflow::saturate : Overflow::special;
  } else if (key == "policy") {
    if (!parse_policy(value, s.policy)) bad_value();
  } else {
    fail(text, "unknown option '" + std::string(key) + "'");
  }
}

// The exponent of the lowest set bit over every value the format uses: each value is a float32 only
// if this is at least -149. (A subnormals-off format still needs 2^(emin − M) for the lowest binade,
// unless that binade holds no value with those bits, as in e1m1fn.)
int lowest_bit_exponent(const Format& f, int bias) {
  const int M = f.spec.mantissa_bits;
  int lowest = 1 << 20;
  for (std::uint32_t magnitude = f.has_zero ? 1u : 0u; magnitude <= f.max_magnitude; ++magnitude) {
    const std::uint32_t field = magnitude >> M;
    const bool subnormal = field < f.min_normal_field;
    if (subnormal && !f.spec.subnormals) continue;
    const std::uint32_t fraction = magnitude & ((1u << M) - 1u);
    const std::uint32_t significand = subnormal ? fraction : (fraction | (1u << M));
    if (significand == 0) continue;
    const int exponent = static_cast<int>(subnormal ? f.min_normal_field : field) - bias - M;
    lowest = std::min(lowest, exponent + std::countr_zero(significand));
  }
  return lowest;
}

}  // namespace

std::string_view policy_name(SpecialPolicy policy) {
  switch (policy) {
    case SpecialPolicy::ieee: return "ieee";
    case SpecialPolicy::fn: return "fn";
    case SpecialPolicy::fnuz: return "fnuz";
    case SpecialPolicy::finite: return "finite";
    case SpecialPolicy::fnu: return "fnu";
  }
  return "?";
}

std::span<const NamedFormat> named_formats() { return kNamed; }

FormatSpec parse_format(std::string_view text) {
  const auto comma = text.find(',');
  const std::string_view base = text.substr(0, comma);
  FormatSpec s;
  if (!parse_grammar(base, s)) fail(text, "unknown format name '" + std::string(base) + "'");
  bool bias_set = false;
  const SpecialPolicy base_policy = s.policy;
  std::string_view rest = comma == std::string_view::npos ? "" : text.substr(comma + 1);
  while (comma != std::string_view::npos) {
    const auto next = rest.find(',');
    apply_option(text, rest.substr(0, next), s, bias_set);
    if (next == std::string_view::npos) break;
    rest = rest.substr(next + 1);
  }
  // A policy option re-derives the default bias unless a bias was given explicitly.
  if (!bias_set && s.policy != base_policy) s.bias = default_bias(s.exponent_bits, s.policy);
  if (auto why = validation_error(s); !why.empty()) fail(text, why);
  return s;
}

std::string validation_error(const FormatSpec& s) {
  const int E = s.exponent_bits, M = s.mantissa_bits;
  if (E < 1 || E > 8) return "exponent bits must be 1..8, got " + std::to_string(E);
  const bool has_sign = s.policy != SpecialPolicy::fnu;
  if (M < 0 || E + M + (has_sign ? 1 : 0) > 16) {
    return "total width must be at most 16 bits, got " + std::to_string(E + M + (has_sign ? 1 : 0));
  }
  if (s.policy == SpecialPolicy::fnu && M != 0) return "policy fnu is exponent-only: mantissa bits must be 0";
  if (s.policy == SpecialPolicy::ieee && (E < 2 || M < 1)) {
    return "policy ieee needs at least 2 exponent bits and 1 mantissa bit (Inf and NaN take the top "
           "exponent); use fn";
  }
  if (s.policy == SpecialPolicy::fn && E + M < 2) return "policy fn leaves no positive finite value";
  // Far enough out that the exponent arithmetic below cannot overflow, and no such bias is valid.
  constexpr int kBiasLimit = 1 << 20;
  if (s.bias < -kBiasLimit || s.bias > kBiasLimit) {
    return "bias " + std::to_string(s.bias) + " puts values outside float32 (float32 holds exponents -149..127)";
  }
  const Format f = make_format(FormatSpec{E, M, 0, s.policy, s.subnormals, s.overflow});
  const int emin = static_cast<int>(f.min_normal_field) - s.bias;
  const int emax = static_cast<int>(f.max_magnitude >> M) - s.bias;
  const int lowest = lowest_bit_exponent(f, s.bias);
  if (emax > 127 || lowest < -149) {
    return "bias " + std::to_string(s.bias) + " puts values outside float32 (exponents " +
           std::to_string(std::min(lowest, emin)) + ".." + std::to_string(emax) + ", float32 holds -149..127)";
  }
  return {};
}

std::string format_name(const FormatSpec& s) {
  for (const auto& named : kNamed) {
    if (named.spec == s) return std::string(named.name);
  }
  // A base name with the same E and M (an alias where one exists), then whatever differs from
  // what that base parses to.
  std::string name = "e" + std::to_string(s.exponent_bits) + "m" + std::to_string(s.mantissa_bits);
  const bool has_suffix = s.policy == SpecialPolicy::fn || s.policy == SpecialPolicy::fnuz ||
                          s.policy == SpecialPolicy::fnu;
  if (has_suffix) name += policy_name(s.policy);
  for (const auto& named : kNamed) {
    const FormatSpec& n = named.spec;
    if (n.exponent_bits == s.exponent_bits && n.mantissa_bits == s.mantissa_bits && n.policy == s.policy) {
      name = named.name;
    }
  }
  FormatSpec base;
  parse_grammar(name, base);
  if (base.policy != s.policy) name += ",policy=" + std::string(policy_name(s.policy));
  if (s.bias != default_bias(s.exponent_bits, s.policy)) name += ",bias=" + std::to_string(s.bias);
  if (!s.subnormals) name += ",subnormals=off";
  if (s.overflow == Overflow::special) name += ",overflow=inf";
  return name;
}

}  // namespace altgrad::format
