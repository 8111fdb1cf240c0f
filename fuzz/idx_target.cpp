// Fuzz target: the idx reader (src/data/idx.hpp), images and labels file together.
// Input: a 4-byte little-endian length L, then L bytes of the images file (fewer when the input
// ends first), then the labels file. Either file may be gzipped (the reader inflates it).
// Expected outcomes: a set, or RuntimeError ("FILE: problem"). Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/errors.hpp"
#include "data/idx.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const std::size_t declared = std::size_t{data[0]} | std::size_t{data[1]} << 8 | std::size_t{data[2]} << 16 |
                               std::size_t{data[3]} << 24;
  const std::string_view rest(reinterpret_cast<const char*>(data + 4), size - 4);
  const std::size_t split = declared < rest.size() ? declared : rest.size();
  const hpcnn::fuzz::InputFile images(rest.substr(0, split));
  const hpcnn::fuzz::InputFile labels(rest.substr(split));
  try {
    const hpcnn::data::ImageSet set = hpcnn::data::read_idx_pair(images.path(), labels.path());
    // What the pipeline relies on: one label per image, each in range, and the pixels of them all.
    hpcnn::fuzz::expect(set.pixels.size() == set.size() * set.image_bytes(), "pixels of every image");
    for (std::int32_t label : set.labels)
      hpcnn::fuzz::expect(label >= 0 && label < set.classes, "every label in [0, classes)");
  } catch (const hpcnn::RuntimeError&) {
  }
  return 0;
}
