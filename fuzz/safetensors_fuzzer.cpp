// safetensors files: read_safetensors either returns tensors whose data fills their shapes, which
// write_safetensors writes and read_safetensors reads back to the same values (and writing those
// gives the same bytes again), or throws CheckpointError naming the file.
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_support.hpp"
#include "io/safetensors.hpp"

using namespace altgrad;
namespace fs = std::filesystem;

namespace {

// The element count of a shape, or -1 when it does not fit in 62 bits.
std::int64_t checked_elements(const std::vector<std::int64_t>& shape) {
  unsigned __int128 n = 1;
  for (const std::int64_t d : shape) {
    if (d < 0) return -1;
    n *= static_cast<unsigned __int128>(d);
    if (n > (static_cast<unsigned __int128>(1) << 62)) return -1;
  }
  return static_cast<std::int64_t>(n);
}

std::vector<io::TensorRef> refs(const io::SafetensorsFile& file) {
  std::vector<io::TensorRef> out;
  for (const auto& [name, t] : file.tensors) {
    if (t.dtype == io::Dtype::f32) {
      out.emplace_back(name, t.shape, t.data);
    } else {
      out.emplace_back(name, t.shape, t.dtype, t.bytes);
    }
  }
  return out;
}

bool same(const io::SafetensorsFile& a, const io::SafetensorsFile& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (const auto& [name, t] : a.tensors) {
    const auto it = b.tensors.find(name);
    if (it == b.tensors.end() || it->second.shape != t.shape || it->second.data.size() != t.data.size()) return false;
    if (it->second.dtype != t.dtype || it->second.bytes != t.bytes) return false;
    if (!t.data.empty() && std::memcmp(t.data.data(), it->second.data.data(), t.data.size() * sizeof(float)) != 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Scratch scratch;
  const fs::path path = scratch.add("in.safetensors", fuzz::as_text({data, size}));
  io::SafetensorsFile file;
  try {
    file = io::read_safetensors(path);
  } catch (const io::CheckpointError& e) {
    fuzz::expect_message_names(e.what(), path);
    return 0;
  }
  for (const auto& [name, t] : file.tensors) {
    const std::size_t elements = t.dtype == io::Dtype::f32 ? t.data.size()
                                 : t.bytes.size() / (t.dtype == io::Dtype::u16 ? 2 : 1);
    if (checked_elements(t.shape) != static_cast<std::int64_t>(elements)) fuzz::fail("tensor '" + name + "' does not fill its shape");
  }
  const fs::path out = scratch.output_dir("out");
  io::write_safetensors(out / "first.safetensors", refs(file), file.metadata);
  const io::SafetensorsFile again = io::read_safetensors(out / "first.safetensors");
  if (!same(file, again)) fuzz::fail("re-written file reads back different tensors");
  io::write_safetensors(out / "second.safetensors", refs(again), again.metadata);
  if (fuzz::read_bytes(out / "first.safetensors") != fuzz::read_bytes(out / "second.safetensors")) {
    fuzz::fail("writing what was read back gives other bytes");
  }
  return 0;
}
