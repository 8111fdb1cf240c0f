// Fuzz target: the result-file reader (read_result_file, src/results/result_file.hpp) on a file of
// the input's bytes. Each input is read twice: as it is (mostly stopped by the checksum block),
// and, when it starts with the checksum block's magic, with that block recomputed to match the
// rest, as a hostile writer would, so that the mutations reach libhdf5 and the attribute checks.
// Expected outcomes: a run, or RuntimeError ("FILE: reason"). Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "base/crc32.hpp"
#include "base/errors.hpp"
#include "fuzz/fuzz_input.hpp"
#include "results/result_file.hpp"

// libhdf5 is not instrumented, keeps process-lifetime allocations and leaks a few bytes on some
// damaged files (docs/FUZZING.md): leak reports would be about the library, not the reader.
// It also asks malloc for sizes it reads from a hostile file (up to 16 EB, fuzz/known_failures):
// such a request fails, as it does outside the sanitizer, so that fuzzing goes on past this known
// kind of finding (the replay, tests/fuzz_replay.sh, still counts one over 2 GB as a failure).
// Memory errors and undefined behaviour stay fatal (as in tests/test_result_damage.cpp).
extern "C" const char* __asan_default_options() { return "detect_leaks=0:allocator_may_return_null=1"; }

namespace {

// The checksum block of docs/RESULTS.md: a text header in the file's first 512 bytes (an HDF5
// user block) with the file's size and the CRC-32 of every byte after the block.
constexpr std::size_t kUserBlock = 512;
constexpr std::string_view kBlockMagic = "hpcnn-result\n";

std::string with_recomputed_checksum(std::string bytes) {
  hpcnn::Crc32 crc;
  crc.add(bytes.data() + kUserBlock, bytes.size() - kUserBlock);
  char block[kUserBlock] = {};
  std::snprintf(block, sizeof block, "%.*schecksum-block 1\nsize %llu\ncrc32 %08x\n", static_cast<int>(kBlockMagic.size()),
                kBlockMagic.data(), static_cast<unsigned long long>(bytes.size()), static_cast<unsigned>(crc.value()));
  bytes.replace(0, kUserBlock, block, kUserBlock);
  return bytes;
}

void read(std::string_view bytes) {
  const hpcnn::fuzz::InputFile file(bytes);
  try {
    const hpcnn::ResultRun run = hpcnn::read_result_file(file.path());
    for (const hpcnn::ResultPoint& point : run.points)
      for (const hpcnn::Array& array : point.arrays) {
        std::size_t count = 1;
        for (std::size_t d : array.dims) count *= d;
        hpcnn::fuzz::expect(array.data.size() == count, "an array holds the product of its dimensions");
      }
  } catch (const hpcnn::RuntimeError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  read(bytes);
  if (bytes.size() < kUserBlock || bytes.compare(0, kBlockMagic.size(), kBlockMagic) != 0) return 0;
  const std::string fixed = with_recomputed_checksum(bytes);
  if (fixed != bytes) read(fixed);  // (an input whose block already matched was read above)
  return 0;
}
