#include "sweep/run_name.hpp"

#include <charconv>
#include <cmath>

namespace altgrad::sweep {
namespace {

std::string safe(std::string text) {
  for (char& c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '+' || c == '.';
    if (!ok) c = '_';
  }
  return text;
}

// "3e-04" → "3e-4", "1e+05" → "1e5".
std::string compact_exponent(const std::string& scientific) {
  const auto e = scientific.find('e');
  std::string mantissa = scientific.substr(0, e);
  std::string exponent = scientific.substr(e + 1);
  std::string sign;
  if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+')) {
    if (exponent[0] == '-') sign = "-";
    exponent.erase(0, 1);
  }
  exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
  return mantissa + "e" + sign + exponent;
}

}  // namespace

std::string key_label(const std::string& key) {
  if (key == "learning_rate") return "lr";
  const auto dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

std::string number_text(double value) {
  char buffer[64];
  const double magnitude = std::fabs(value);
  const bool scientific = value != 0 && (magnitude < 0.01 || magnitude >= 1e4);
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value,
                                 scientific ? std::chars_format::scientific : std::chars_format::fixed).ptr;
  const std::string text(buffer, end);
  return scientific ? compact_exponent(text) : text;
}

NamePart name_part(const std::string& key, const nlohmann::json& value) {
  if (key == "recipe") return {safe(value.get<std::string>()), false};
  const std::string label = key_label(key);
  if (value.is_number_integer()) return {safe(label + value.dump()), key == "seed"};
  if (value.is_number()) return {safe(label + number_text(value.get<double>())), false};
  if (value.is_string()) return {safe(label + "-" + value.get<std::string>()), false};
  return {safe(label + "-" + value.dump()), false};
}

std::string join_name(const std::vector<NamePart>& parts) {
  std::string name;
  for (const NamePart& part : parts) name += (name.empty() ? "" : ".") + part.text;
  return name.empty() ? "base" : name;
}

std::string join_group(const std::vector<NamePart>& parts) {
  std::vector<NamePart> kept;
  for (const NamePart& part : parts) {
    if (!part.is_seed) kept.push_back(part);
  }
  return join_name(kept);
}

}  // namespace altgrad::sweep
