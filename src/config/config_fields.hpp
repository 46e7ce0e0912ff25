#pragma once
// The config schema (internal to config/): one entry per key, naming its member, type, allowed
// values and a one-line description. Parsing, --set overrides, validation and writing all walk this
// one list, so a key added here is read, checked and written everywhere.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <variant>

#include "config/config.hpp"

namespace altgrad::config::schema {

template <typename T>
struct IntegerField {
  T TrainConfig::*member;
  std::int64_t min, max;  // inclusive, within T's range
};

struct RealField {
  double TrainConfig::*member;
  double min, max;  // ±infinity for no bound; values must be finite either way
  bool min_open, max_open;
};

struct BoolField {
  bool TrainConfig::*member;
};

struct TextField {
  std::string TrainConfig::*member;
  bool may_be_empty;
};

template <typename Enum>
struct ChoiceField {
  Enum TrainConfig::*member;
  std::span<const std::string_view> names;  // indexed by the enum's value
};

using FieldType = std::variant<IntegerField<int>, IntegerField<std::int64_t>, IntegerField<std::uint64_t>, RealField,
                               BoolField, TextField, ChoiceField<Norm>, ChoiceField<Mlp>, ChoiceField<data::CorpusFormat>,
                               ChoiceField<OptimizerKind>, ChoiceField<Precondition>, ChoiceField<Device>,
                               ChoiceField<format::Rounding>,
                               ChoiceField<GradReduceSum>>;

struct Field {
  std::string_view key;
  std::string_view section;  // heading in written configs
  std::string_view doc;      // one line, written as a comment
  FieldType type;
};

// Every key, in the order configs are written.
std::span<const Field> fields();
const Field* find_field(std::string_view key);

// What may be written, for messages: "an integer >= 1", "a number in (0, 1)", `one of "a", "b"`.
std::string allowed_values(const Field& field);

// Stores `node` (from a file or a --set value) into `config`. Throws ConfigError starting with
// `origin` on a wrong type or a value outside the allowed range or set.
void read_value(const Field& field, const toml::node& node, TrainConfig& config, const std::string& origin);

// "key = value is not allowed (allowed: ...)" when the value in `config` breaks the field's rule.
std::optional<std::string> value_problem(const Field& field, const TrainConfig& config);

// The value as a TOML literal that parses back to the same value: 4, 0.001, true, "runs/x".
std::string value_literal(const Field& field, const TrainConfig& config);

}  // namespace altgrad::config::schema
