#pragma once
// Format names: the aliases of DESIGN.md, the grammar e<E>m<M>[fn|fnuz|fnu], and options.
//   e4m3                     alias of e4m3fn (OCP E4M3, max 448)
//   e5m2fnuz,bias=16         the grammar, plus options after commas:
//       bias=N  subnormals=on|off  overflow=saturate|inf  policy=ieee|fn|fnuz|finite|fnu
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "format/spec.hpp"

namespace altgrad::format {

struct NamedFormat {
  std::string_view name;
  FormatSpec spec;
  std::string_view note;  // where the format comes from
};

// The named formats, in the order `altgrad formats` lists them.
std::span<const NamedFormat> named_formats();

class FormatError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Parses a format name; throws FormatError naming the problem and listing the valid forms.
FormatSpec parse_format(std::string_view text);

// Why a spec is not a usable format, or an empty string when it is.
std::string validation_error(const FormatSpec& spec);

// The shortest name that parse_format() maps back to `spec`.
std::string format_name(const FormatSpec& spec);

std::string_view policy_name(SpecialPolicy policy);

}  // namespace altgrad::format
