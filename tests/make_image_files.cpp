// Writes a small, learnable image data set in the exact on-disk formats the readers take, for the
// scripts that train on files without the real data sets (there is no network on CI machines):
//   make_image_files idx|cifar10|cifar100 DIR TRAIN TEST [SEED]
// idx: train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-... (28x28, 10 classes, uncompressed);
// cifar10: data_batch_1..5.bin (the training images spread over them) + test_batch.bin;
// cifar100: train.bin + test.bin (coarse label, fine label). Class c of C is a bright 8x8 square
// at a position of its own on a noisy background, so a small network learns it in an epoch or two.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

using Bytes = std::vector<std::uint8_t>;

std::uint64_t next(std::uint64_t& state) {  // xorshift64*: reproducible without <random>'s variation
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 2685821657736338717ull;
}

// One image (channels planes of size x size) of class c out of `classes`.
Bytes image(int c, int classes, int channels, int size, std::uint64_t& state) {
  Bytes px(static_cast<std::size_t>(channels) * size * size);
  for (std::uint8_t& p : px) p = static_cast<std::uint8_t>(next(state) % 96);
  const int cells = (size - 8) / 2 + 1, slot = c * (cells * cells - 1) / std::max(1, classes - 1);
  const int y0 = (slot / cells) * 2, x0 = (slot % cells) * 2;
  for (int ch = 0; ch < channels; ++ch)
    for (int y = y0; y < y0 + 8; ++y)
      for (int x = x0; x < x0 + 8; ++x) px[(static_cast<std::size_t>(ch) * size + y) * size + x] = 230;
  return px;
}

void put32(Bytes& b, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(v >> s));
}

bool write(const std::string& path, const Bytes& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  return static_cast<bool>(f);
}

bool write_idx(const std::string& dir, const std::string& prefix, int n, std::uint64_t& state) {
  Bytes images, labels;
  put32(images, 0x803);
  put32(images, static_cast<std::uint32_t>(n));
  put32(images, 28);
  put32(images, 28);
  put32(labels, 0x801);
  put32(labels, static_cast<std::uint32_t>(n));
  for (int i = 0; i < n; ++i) {
    const int c = static_cast<int>(next(state) % 10);
    const Bytes px = image(c, 10, 1, 28, state);
    images.insert(images.end(), px.begin(), px.end());
    labels.push_back(static_cast<std::uint8_t>(c));
  }
  return write(dir + "/" + prefix + "-images-idx3-ubyte", images) && write(dir + "/" + prefix + "-labels-idx1-ubyte", labels);
}

// `n` CIFAR records of `classes` classes (100: coarse label c / 5, then the fine label).
Bytes cifar_records(int n, int classes, std::uint64_t& state) {
  Bytes out;
  for (int i = 0; i < n; ++i) {
    const int c = static_cast<int>(next(state) % static_cast<std::uint64_t>(classes));
    if (classes == 100) out.push_back(static_cast<std::uint8_t>(c / 5));
    out.push_back(static_cast<std::uint8_t>(c));
    const Bytes px = image(c, classes, 3, 32, state);
    out.insert(out.end(), px.begin(), px.end());
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5 || argc > 6) {
    std::fprintf(stderr, "usage: make_image_files idx|cifar10|cifar100 DIR TRAIN TEST [SEED]\n");
    return 2;
  }
  const std::string kind = argv[1], dir = argv[2];
  const int train = std::atoi(argv[3]), test = std::atoi(argv[4]);
  std::uint64_t state = argc == 6 ? std::strtoull(argv[5], nullptr, 10) | 1 : 88172645463325252ull;
  if (train < 1 || test < 1) {
    std::fprintf(stderr, "make_image_files: TRAIN and TEST must be positive, got '%s' '%s'\n", argv[3], argv[4]);
    return 2;
  }
  bool ok = true;
  if (kind == "idx") {
    ok = write_idx(dir, "train", train, state) && write_idx(dir, "t10k", test, state);
  } else if (kind == "cifar10") {
    for (int f = 0; f < 5 && ok; ++f) {  // images f, f+5, ... of the training set in file f+1
      const int in_file = train / 5 + (f < train % 5 ? 1 : 0);
      ok = write(dir + "/data_batch_" + std::to_string(f + 1) + ".bin", cifar_records(in_file, 10, state));
    }
    ok = ok && write(dir + "/test_batch.bin", cifar_records(test, 10, state));
  } else if (kind == "cifar100") {
    ok = write(dir + "/train.bin", cifar_records(train, 100, state)) && write(dir + "/test.bin", cifar_records(test, 100, state));
  } else {
    std::fprintf(stderr, "make_image_files: unknown format '%s' (idx|cifar10|cifar100)\n", kind.c_str());
    return 2;
  }
  if (!ok) {
    std::fprintf(stderr, "make_image_files: cannot write into %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
