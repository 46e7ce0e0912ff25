#include "io/safetensors.hpp"

#include <bit>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <set>

#include "io/atomic_file.hpp"

namespace altgrad::io {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors stores little-endian data");

constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;  // the format's own limit on header size

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& why) {
  throw CheckpointError(path.string() + ": " + why);
}

std::int64_t element_count(const std::vector<std::int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}

constexpr std::uint64_t element_bytes(Dtype dtype) { return dtype == Dtype::f32 ? 4 : dtype == Dtype::u16 ? 2 : 1; }

const char* dtype_name(Dtype dtype) { return dtype == Dtype::f32 ? "F32" : dtype == Dtype::u16 ? "U16" : "U8"; }

std::optional<Dtype> parse_dtype(const nlohmann::json& name) {
  for (const Dtype d : {Dtype::f32, Dtype::u8, Dtype::u16}) {
    if (name == dtype_name(d)) return d;
  }
  return std::nullopt;
}

// The bytes a shape of non-negative dimensions holds; nullopt past 2^64.
std::optional<std::uint64_t> data_bytes(const std::vector<std::int64_t>& shape, Dtype dtype) {
  std::uint64_t bytes = element_bytes(dtype);
  for (const std::int64_t dim : shape) {
    if (__builtin_mul_overflow(bytes, static_cast<std::uint64_t>(dim), &bytes)) return std::nullopt;
  }
  return bytes;
}

std::string header_json(std::span<const TensorRef> tensors, const std::map<std::string, std::string>& metadata,
                        const std::filesystem::path& path) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();  // "{}", not "null", when empty
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string> names;
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (!names.insert(t.name).second) fail(path, "duplicate tensor name '" + t.name + "'");
    const std::uint64_t bytes = t.dtype == Dtype::f32 ? t.data.size_bytes() : t.bytes.size();
    if (static_cast<std::uint64_t>(element_count(t.shape)) * element_bytes(t.dtype) != bytes) {
      fail(path, "tensor '" + t.name + "' has " + std::to_string(bytes) + " bytes of " + dtype_name(t.dtype) +
                     " but its shape holds " + std::to_string(element_count(t.shape)) + " elements");
    }
    header[t.name] = {{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');  // pad so the data starts 8-byte aligned
  return json;
}

Tensor parse_entry(const std::filesystem::path& path, const std::string& name, const nlohmann::json& entry,
                   const std::vector<char>& data) {
  const auto bad = [&](const std::string& why) { fail(path, "tensor '" + name + "': " + why); };
  if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets")) {
    bad("header entry needs dtype, shape and data_offsets");
  }
  const std::optional<Dtype> dtype = parse_dtype(entry["dtype"]);
  if (!dtype) bad("dtype " + entry["dtype"].dump() + " is not supported (F32, U8, U16)");
  Tensor t;
  t.dtype = *dtype;
  for (const auto& dim : entry["shape"]) {
    if (!dim.is_number_integer() || dim.get<std::int64_t>() < 0) bad("shape " + entry["shape"].dump() + " is invalid");
    t.shape.push_back(dim.get<std::int64_t>());
  }
  const auto& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
    bad("data_offsets " + offsets.dump() + " is not [begin, end]");
  }
  const auto begin = offsets[0].get<std::uint64_t>(), end = offsets[1].get<std::uint64_t>();
  if (begin > end || end > data.size()) {
    bad("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] exceed the " +
        std::to_string(data.size()) + " data bytes (truncated file?)");
  }
  const std::optional<std::uint64_t> needed = data_bytes(t.shape, t.dtype);
  if (!needed) bad("shape " + entry["shape"].dump() + " holds more than 2^64 bytes");
  const std::uint64_t expected = *needed;
  if (end - begin != expected) bad(std::to_string(end - begin) + " bytes for a shape needing " + std::to_string(expected));
  void* into = nullptr;
  if (t.dtype == Dtype::f32) {
    t.data.resize(expected / sizeof(float));
    into = t.data.data();
  } else {
    t.bytes.resize(expected);
    into = t.bytes.data();
  }
  if (expected > 0) std::memcpy(into, data.data() + begin, expected);  // never with null pointers
  return t;
}

}  // namespace

void write_safetensors(const std::filesystem::path& path, std::span<const TensorRef> tensors,
                       const std::map<std::string, std::string>& metadata) {
  const std::string json = header_json(tensors, metadata, path);
  write_file_atomically(path, [&](std::ostream& out) {
    const std::uint64_t length = json.size();
    out.write(reinterpret_cast<const char*>(&length), sizeof length);
    out.write(json.data(), static_cast<std::streamsize>(json.size()));
    for (const auto& t : tensors) {
      if (t.dtype == Dtype::f32) {
        out.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(t.data.size_bytes()));
      } else {
        out.write(reinterpret_cast<const char*>(t.bytes.data()), static_cast<std::streamsize>(t.bytes.size()));
      }
    }
  });
}

SafetensorsFile read_safetensors(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) fail(path, "cannot open");
  const auto file_size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  std::uint64_t header_length = 0;
  if (file_size < sizeof header_length || !in.read(reinterpret_cast<char*>(&header_length), sizeof header_length)) {
    fail(path, "file is " + std::to_string(file_size) + " bytes, too short for a safetensors header");
  }
  if (header_length > kMaxHeaderBytes || header_length > file_size - sizeof header_length) {
    fail(path, "header length " + std::to_string(header_length) + " exceeds the file (" + std::to_string(file_size) +
                   " bytes): truncated or not a safetensors file");
  }
  std::string json(header_length, '\0');
  in.read(json.data(), static_cast<std::streamsize>(header_length));
  std::vector<char> data(file_size - sizeof header_length - header_length);
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  if (!in) fail(path, "read failed");

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number past double
    fail(path, std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) fail(path, "header is not a JSON object");
  SafetensorsFile file;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail(path, "__metadata__ is not a JSON object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) fail(path, "metadata '" + key + "' is not a string");
        file.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    file.tensors[name] = parse_entry(path, name, entry, data);
  }
  return file;
}

}  // namespace altgrad::io
