#pragma once
// UTF-8 validation for training text. Byte-level tokens accept any bytes, but a corpus that is not
// valid UTF-8 is almost always a mistake (a Latin-1 file, a binary file, a truncated download), and
// it would quietly teach the model to emit broken text; so loading rejects it and says where.
#include <cstddef>
#include <optional>
#include <string_view>

namespace altgrad::data {

struct Utf8Problem {
  std::size_t offset;        // byte offset of the first byte of the offending sequence
  std::string_view reason;   // e.g. "overlong encoding", "surrogate code point", "truncated sequence"
};

// The first ill-formed sequence in `bytes` per Unicode's definition of well-formed UTF-8 (table 3-7
// of the standard): no overlong forms, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no
// stray continuation bytes, no sequence cut short. std::nullopt when all of `bytes` is valid.
std::optional<Utf8Problem> find_invalid_utf8(std::string_view bytes);

}  // namespace altgrad::data
