// TensorBoard event files. The first byte picks how the rest is used: as the file itself, or as
// Event payloads ("@@ name" sections, see fuzz_support.hpp) framed here with correct lengths and
// CRCs, so that mutations reach the protobuf parsing behind the CRC checks. read_tensorboard_events
// either returns one event per record, where a walk over the record lengths written here finds
// records covering the file exactly, and histograms TensorBoard can draw; or throws
// TensorBoardReadError naming the file.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "io/tensorboard_reader.hpp"
#include "io/tfrecord.hpp"

using namespace altgrad;
namespace fs = std::filesystem;

namespace {

// Records in `bytes` by their length fields alone, or -1 when they do not tile it exactly.
long long record_count(std::string_view bytes) {
  long long count = 0;
  std::uint64_t at = 0;
  while (at < bytes.size()) {
    if (bytes.size() - at < 12) return -1;
    std::uint64_t length = 0;
    std::memcpy(&length, bytes.data() + at, sizeof length);
    if (length > bytes.size() - at - 12 || bytes.size() - at - 12 - length < 4) return -1;
    at += 12 + length + 4;
    ++count;
  }
  return count;
}

std::string framed(const fuzz::Files& payloads) {
  std::string out;
  for (const auto& [name, payload] : payloads) {
    const auto data = std::as_bytes(std::span(payload.data(), payload.size()));
    const auto header = io::tfrecord_header(payload.size());
    const auto footer = io::tfrecord_footer(data);
    out.append(reinterpret_cast<const char*>(header.data()), header.size());
    out += payload;
    out.append(reinterpret_cast<const char*>(footer.data()), footer.size());
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest = fuzz::as_text({data + 1, size - 1});
  const bool frame_here = data[0] & 1;
  const std::string bytes = frame_here ? framed(fuzz::split_files(rest)) : std::string(rest);
  fuzz::Scratch scratch;
  const fs::path path = scratch.add("events.out.tfevents.0.fuzz", bytes);
  std::vector<io::TensorBoardEvent> events;
  try {
    events = io::read_tensorboard_events(path);
  } catch (const io::TensorBoardReadError& e) {
    const std::string message = e.what();
    if (message.find(path.string() + ": ") == std::string::npos) fuzz::fail("error does not name the file: " + message);
    if (frame_here && message.find("does not parse as an Event") == std::string::npos &&
        message.find(": histogram '") == std::string::npos) {
      fuzz::fail("well-framed records refused for their framing: " + message);
    }
    return 0;
  }
  if (record_count(bytes) != static_cast<long long>(events.size())) fuzz::fail("events do not match the records");
  for (const auto& event : events) {
    for (const auto& h : event.histograms) {
      try {
        io::check_tensorboard_histogram(h.histogram);
      } catch (const std::invalid_argument& e) {
        fuzz::fail(std::string("returned a histogram TensorBoard cannot draw: ") + e.what());
      }
    }
  }
  return 0;
}
