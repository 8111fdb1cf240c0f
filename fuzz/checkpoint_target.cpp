// Fuzz target: the training checkpoint reader (Checkpoint::parse, src/harness/checkpoint.hpp),
// which takes the file's bytes. Each input is parsed twice: as it is (mostly stopped by the
// CRC-32 at its end), and with that CRC recomputed, as a hostile writer would, so that the
// mutations reach the parser. The seeds (fuzz/corpus/checkpoint/) are written with kSettings.
// Expected outcomes: a checkpoint, RuntimeError (damaged) or UsageError (other settings).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "base/crc32.hpp"
#include "base/errors.hpp"
#include "harness/checkpoint.hpp"

namespace {

constexpr const char* kSettings = "hpcnn-train --data fuzz";

void parse(const std::string& bytes) {
  try {
    const hpcnn::Checkpoint c = hpcnn::Checkpoint::parse(bytes, "fuzz.ckpt", kSettings);
    (void)c;
  } catch (const hpcnn::RuntimeError&) {
  } catch (const hpcnn::UsageError&) {
  }
}

std::string with_recomputed_crc(std::string bytes) {
  hpcnn::Crc32 crc;
  crc.add(bytes.data(), bytes.size() - 4);
  const std::uint32_t value = crc.value();
  std::memcpy(bytes.data() + bytes.size() - 4, &value, 4);
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  parse(bytes);
  if (bytes.size() < 4) return 0;
  const std::string fixed = with_recomputed_crc(bytes);
  if (fixed != bytes) parse(fixed);
  return 0;
}
