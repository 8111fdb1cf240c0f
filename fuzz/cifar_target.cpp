// Fuzz target: the CIFAR-10 and CIFAR-100 binary readers (src/data/cifar.hpp). Input: one file,
// read as CIFAR-10, as CIFAR-100, and as two CIFAR-10 files in a row (the concatenation path).
// Expected outcomes: a set, or RuntimeError ("FILE: problem"). Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "data/cifar.hpp"
#include "fuzz/fuzz_input.hpp"

namespace {

void read_as(hpcnn::data::CifarKind kind, const std::vector<std::string>& paths) {
  try {
    const hpcnn::data::ImageSet set = hpcnn::data::read_cifar(kind, paths);
    hpcnn::fuzz::expect(set.pixels.size() == set.size() * set.image_bytes(), "pixels of every image");
    for (std::int32_t label : set.labels)
      hpcnn::fuzz::expect(label >= 0 && label < set.classes, "every label in [0, classes)");
  } catch (const hpcnn::RuntimeError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const hpcnn::fuzz::InputFile file(data, size);
  read_as(hpcnn::data::CifarKind::Cifar10, {file.path()});
  read_as(hpcnn::data::CifarKind::Cifar100, {file.path()});
  read_as(hpcnn::data::CifarKind::Cifar10, {file.path(), file.path()});
  return 0;
}
