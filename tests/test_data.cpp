// Real data: the idx and CIFAR readers on small files written here in the exact formats
// (plain and gzip), every malformed case with its one-line error naming the file; data set
// detection; the sampler (deterministic shuffles, every sample once per epoch over 1, 2, 3 ranks);
// the batch loader (normalization, padding, augmentation, prefetch and cache give the same data).
// Distributed training on real data: worker shards cover every sample once per epoch,
// whole-set workers draw their own permutations, and samples read from the files at their offsets
// equal the decoded set, counted.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "data/batch_loader.hpp"
#include "data/cifar.hpp"
#include "data/dataset.hpp"
#include "data/file_bytes.hpp"
#include "data/idx.hpp"
#include "data/page_cache.hpp"
#include "data/sample_files.hpp"
#include "data/sampler.hpp"
#include "data/scratch_copy.hpp"
#include "base/errors.hpp"

namespace fs = std::filesystem;
using namespace hpcnn;
using namespace hpcnn::data;
using Bytes = std::vector<std::uint8_t>;

namespace {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "hpcnn_test_data_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    path_ = tmpl;
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void write(const std::string& path, const Bytes& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

Bytes gzip(const Bytes& b) {
  // gzip container via deflateInit2 (windowBits 16 + 15).
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes out(deflateBound(&z, b.size()) + 64);
  z.next_in = const_cast<Bytef*>(b.data());
  z.avail_in = static_cast<uInt>(b.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void put32(Bytes& b, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(v >> s));
}

Bytes idx_images(std::uint32_t n, std::uint32_t h, std::uint32_t w) {
  Bytes b = {0, 0, 8, 3};
  put32(b, n);
  put32(b, h);
  put32(b, w);
  for (std::uint32_t i = 0; i < n * h * w; ++i) b.push_back(static_cast<std::uint8_t>((i * 7) % 256));
  return b;
}

Bytes idx_labels(std::uint32_t n) {
  Bytes b = {0, 0, 8, 1};
  put32(b, n);
  for (std::uint32_t i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(i % 10));
  return b;
}

// Expects read_idx_pair to throw a RuntimeError whose message starts with `file` and holds `what`.
void expect_idx_error(const std::string& images, const std::string& labels, const std::string& file,
                      const std::string& what) {
  try {
    read_idx_pair(images, labels);
    ADD_FAILURE() << "no error for " << what;
  } catch (const RuntimeError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(file + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

}  // namespace

TEST(Idx, ReadsPlainAndGzipFiles) {
  TempDir d;
  write(d.file("i"), idx_images(5, 4, 3));
  write(d.file("l"), idx_labels(5));
  write(d.file("i.gz"), gzip(idx_images(5, 4, 3)));
  write(d.file("l.gz"), gzip(idx_labels(5)));
  for (const auto& [i, l] : {std::pair{"i", "l"}, std::pair{"i.gz", "l.gz"}}) {
    const ImageSet s = read_idx_pair(d.file(i), d.file(l));
    ASSERT_EQ(s.size(), 5u);
    EXPECT_EQ(s.channels, 1);
    EXPECT_EQ(s.height, 4);
    EXPECT_EQ(s.width, 3);
    EXPECT_EQ(s.classes, 10);
    ASSERT_EQ(s.pixels.size(), 60u);
    for (std::size_t k = 0; k < 60; ++k) EXPECT_EQ(s.pixels[k], (k * 7) % 256);
    for (std::size_t k = 0; k < 5; ++k) EXPECT_EQ(s.labels[k], static_cast<int>(k % 10));
  }
}

TEST(Idx, MalformedFilesGiveOneLineErrors) {
  TempDir d;
  const std::string good_i = d.file("good_i"), good_l = d.file("good_l"), bad = d.file("bad");
  write(good_i, idx_images(4, 2, 2));
  write(good_l, idx_labels(4));
  auto images_case = [&](Bytes b, const std::string& what) {
    write(bad, b);
    expect_idx_error(bad, good_l, bad, what);
  };
  Bytes b = idx_images(4, 2, 2);
  b[1] = 1;
  images_case(b, "bad magic");
  b = idx_images(4, 2, 2);
  b[2] = 0x0d;
  images_case(b, "data type 0x0d");
  b = idx_images(4, 2, 2);
  b[3] = 2;
  images_case(b, "2 dimensions");
  images_case(Bytes{0, 0, 8}, "too short");
  images_case(Bytes{0, 0, 8, 3, 0, 0, 0, 4, 0}, "truncated idx header");
  b = idx_images(4, 2, 2);
  b.pop_back();
  images_case(b, "truncated");
  b = idx_images(4, 2, 2);
  b.push_back(0);
  b.push_back(0);
  images_case(b, "2 trailing bytes");
  b = idx_images(4, 2, 2);
  b[7] = 0;  // N = 0
  images_case(b, "dimension 0 is zero");
  // Dimensions far beyond the file: an error, not an allocation of what the header claims.
  b = idx_images(4, 2, 2);
  b[4] = b[8] = b[12] = 0x7f;
  images_case(b, "absurd");
  b = idx_images(4, 2, 2);
  b[8] = 0x7f;
  images_case(b, "truncated");

  // Labels: count, range, truncation.
  write(bad, idx_labels(3));
  expect_idx_error(good_i, bad, bad, "3 labels, but " + good_i + " has 4 images");
  b = idx_labels(4);
  b[8 + 2] = 10;
  write(bad, b);
  expect_idx_error(good_i, bad, bad, "label 10 of image 2 is out of range [0, 10)");
  b = idx_labels(4);
  b.pop_back();
  write(bad, b);
  expect_idx_error(good_i, bad, bad, "truncated");
  b = idx_images(4, 2, 2);
  write(bad, b);
  expect_idx_error(good_i, bad, bad, "3 dimensions");

  // Missing file, gzip damage.
  expect_idx_error(d.file("missing"), good_l, d.file("missing"), "no such file");
  Bytes gz = gzip(idx_images(4, 2, 2));
  Bytes cut(gz.begin(), gz.begin() + static_cast<std::ptrdiff_t>(gz.size() / 2));
  write(bad, cut);
  expect_idx_error(bad, good_l, bad, "truncated gzip data");
  Bytes corrupt = gz;
  for (std::size_t k = 10; k < corrupt.size() - 8; ++k) corrupt[k] ^= 0x5a;
  write(bad, corrupt);
  expect_idx_error(bad, good_l, bad, "gzip");
  Bytes trailing = gz;
  trailing.push_back(1);
  trailing.push_back(2);
  write(bad, trailing);
  expect_idx_error(bad, good_l, bad, "trailing bytes after the gzip data");
  // Two concatenated gzip members are one valid file.
  const Bytes whole = idx_images(4, 2, 2);
  Bytes part1(whole.begin(), whole.begin() + 9), part2(whole.begin() + 9, whole.end());
  Bytes two = gzip(part1), g2 = gzip(part2);
  two.insert(two.end(), g2.begin(), g2.end());
  write(bad, two);
  EXPECT_EQ(read_idx_pair(bad, good_l).size(), 4u);
}

// The compressed bytes are read a block (1 MiB) at a time: members and errors that span blocks.
TEST(FileBytes, GzipMembersAcrossReadBlocksInflateWhole) {
  TempDir d;
  Bytes noise(3u << 20);  // incompressible: each member is over a block
  std::uint32_t x = 12345;
  for (auto& b : noise) b = static_cast<std::uint8_t>((x = x * 1664525u + 1013904223u) >> 24);
  const Bytes first(noise.begin(), noise.begin() + (1 << 20) + 17), second(noise.begin() + (1 << 20) + 17, noise.end());
  Bytes file = gzip(first), g2 = gzip(second);
  file.insert(file.end(), g2.begin(), g2.end());
  write(d.file("two.gz"), file);
  EXPECT_EQ(read_file_bytes(d.file("two.gz")), noise);
  // Every split of the file at a block boundary: one byte of trailing garbage, and a cut.
  for (const std::size_t extra : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
    Bytes bad = file;
    bad.insert(bad.end(), extra, 0x1f);
    write(d.file("bad.gz"), bad);
    try {
      read_file_bytes(d.file("bad.gz"));
      ADD_FAILURE() << extra << " trailing bytes accepted";
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(extra) + " trailing bytes"), std::string::npos) << e.what();
    }
  }
  write(d.file("cut.gz"), Bytes(file.begin(), file.begin() + (2 << 20) + 5));
  try {
    read_file_bytes(d.file("cut.gz"));
    ADD_FAILURE() << "a cut file accepted";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated gzip data"), std::string::npos) << e.what();
  }
}

TEST(FileBytes, DecompressedSizeIsCapped) {
  TempDir d;
  write(d.file("z.gz"), gzip(Bytes(100000, 0)));
  EXPECT_EQ(read_file_bytes(d.file("z.gz")).size(), 100000u);
  try {
    read_file_bytes(d.file("z.gz"), 50000);
    ADD_FAILURE() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("limit of 50000 bytes"), std::string::npos) << e.what();
  }
}

namespace {

Bytes cifar_records(int n, bool c100, int first_label = 0) {
  Bytes b;
  for (int i = 0; i < n; ++i) {
    if (c100) b.push_back(static_cast<std::uint8_t>((first_label + i) % 20));
    b.push_back(static_cast<std::uint8_t>((first_label + i) % (c100 ? 100 : 10)));
    for (int k = 0; k < 3072; ++k) b.push_back(static_cast<std::uint8_t>((i + k) % 251));
  }
  return b;
}

void expect_cifar_error(CifarKind kind, const std::string& path, const std::string& what) {
  try {
    read_cifar(kind, {path});
    ADD_FAILURE() << "no error for " << what;
  } catch (const RuntimeError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

}  // namespace

TEST(Cifar, ReadsCifar10AndCifar100) {
  TempDir d;
  write(d.file("a.bin"), cifar_records(3, false));
  write(d.file("b.bin"), cifar_records(2, false, 7));
  const ImageSet s = read_cifar(CifarKind::Cifar10, {d.file("a.bin"), d.file("b.bin")});
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s.channels, 3);
  EXPECT_EQ(s.height, 32);
  EXPECT_EQ(s.classes, 10);
  EXPECT_EQ(s.labels, (std::vector<std::int32_t>{0, 1, 2, 7, 8}));
  EXPECT_EQ(s.image(1)[5], (1 + 5) % 251);
  EXPECT_EQ(s.image(4)[3071], (1 + 3071) % 251);

  write(d.file("c.bin"), cifar_records(4, true, 97));
  const ImageSet t = read_cifar(CifarKind::Cifar100, {d.file("c.bin")});
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t.classes, 100);
  EXPECT_EQ(t.labels, (std::vector<std::int32_t>{97, 98, 99, 0}));  // the fine label
  EXPECT_EQ(t.image(2)[0], 2);
}

TEST(Cifar, MalformedFilesGiveOneLineErrors) {
  TempDir d;
  const std::string bad = d.file("bad.bin");
  Bytes b = cifar_records(2, false);
  b.pop_back();
  write(bad, b);
  expect_cifar_error(CifarKind::Cifar10, bad, "not a whole number of 3073-byte CIFAR-10 records");
  b = cifar_records(2, false);
  b.push_back(0);
  write(bad, b);
  expect_cifar_error(CifarKind::Cifar10, bad, "not a whole number");
  b = cifar_records(2, false);
  b[3073] = 10;
  write(bad, b);
  expect_cifar_error(CifarKind::Cifar10, bad, "label 10 of record 1 is out of range [0, 10)");
  write(bad, Bytes{});
  expect_cifar_error(CifarKind::Cifar10, bad, "empty file");
  b = cifar_records(2, true);
  b[1] = 100;
  write(bad, b);
  expect_cifar_error(CifarKind::Cifar100, bad, "label 100 of record 0 is out of range [0, 100)");
  b = cifar_records(2, true);
  b[3074] = 20;
  write(bad, b);
  expect_cifar_error(CifarKind::Cifar100, bad, "coarse label 20 of record 1");
  write(bad, cifar_records(2, false));  // CIFAR-10 records read as CIFAR-100: wrong record size
  expect_cifar_error(CifarKind::Cifar100, bad, "3074-byte CIFAR-100 records");
}

TEST(DataSet, DetectsTheFormatFromTheFilesPresent) {
  TempDir root;
  const fs::path fashion = fs::path(root.path()) / "my-fashion";
  fs::create_directory(fashion);
  write((fashion / "train-images-idx3-ubyte.gz").string(), gzip(idx_images(6, 28, 28)));
  write((fashion / "train-labels-idx1-ubyte.gz").string(), gzip(idx_labels(6)));
  write((fashion / "t10k-images-idx3-ubyte").string(), idx_images(2, 28, 28));
  write((fashion / "t10k-labels-idx1-ubyte").string(), idx_labels(2));
  DataSet ds = load_dataset(fashion.string());
  EXPECT_EQ(ds.format, "idx");
  EXPECT_EQ(ds.name, "fashion-mnist");
  EXPECT_EQ(ds.train.size(), 6u);
  EXPECT_EQ(ds.test.size(), 2u);

  const fs::path c10 = fs::path(root.path()) / "c10" / "cifar-10-batches-bin";
  fs::create_directories(c10);
  for (int k = 1; k <= 5; ++k) write((c10 / ("data_batch_" + std::to_string(k) + ".bin")).string(), cifar_records(2, false));
  write((c10 / "test_batch.bin").string(), cifar_records(3, false));
  ds = load_dataset((fs::path(root.path()) / "c10").string());  // the archive's parent folder works too
  EXPECT_EQ(ds.name, "cifar10");
  EXPECT_EQ(ds.train.size(), 10u);
  EXPECT_EQ(ds.test.size(), 3u);

  const fs::path c100 = fs::path(root.path()) / "c100";
  fs::create_directory(c100);
  write((c100 / "train.bin").string(), cifar_records(4, true));
  write((c100 / "test.bin").string(), cifar_records(1, true));
  ds = load_dataset(c100.string());
  EXPECT_EQ(ds.name, "cifar100");
  EXPECT_EQ(ds.train.classes, 100);

  // Nothing there: the error lists what was looked for.
  const fs::path empty = fs::path(root.path()) / "empty";
  fs::create_directory(empty);
  try {
    locate_dataset(empty.string());
    ADD_FAILURE();
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    for (const char* f : {"train-images-idx3-ubyte", "t10k-labels-idx1-ubyte", "data_batch_1", "test_batch.bin", "train.bin"})
      EXPECT_NE(msg.find(f), std::string::npos) << msg;
  }
  // Half a data set: names what is missing.
  fs::remove(fashion / "t10k-labels-idx1-ubyte");
  try {
    locate_dataset(fashion.string());
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("missing t10k-labels-idx1-ubyte"), std::string::npos) << e.what();
  }
  EXPECT_THROW(locate_dataset(root.file("no-such-dir/")), UsageError);
  EXPECT_THROW(locate_dataset("imagenet-22k"), UsageError);
  // A bare name is looked up under $HPCNN_DATA first.
  setenv("HPCNN_DATA", (fs::path(root.path()) / "c10").string().c_str(), 1);
  fs::create_directory(fs::path(root.path()) / "c10" / "cifar10");
  for (const auto& f : fs::directory_iterator(c10)) fs::copy(f.path(), fs::path(root.path()) / "c10" / "cifar10");
  EXPECT_EQ(locate_dataset("cifar10").dir, (fs::path(root.path()) / "c10" / "cifar10").string());
  unsetenv("HPCNN_DATA");
}

TEST(Sampler, ShufflesDeterministicallyPerSeedAndEpoch) {
  const auto a = epoch_order(1000, 7, 0, true), b = epoch_order(1000, 7, 0, true);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, epoch_order(1000, 8, 0, true));
  EXPECT_NE(a, epoch_order(1000, 7, 1, true));
  std::vector<std::uint32_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (std::uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_NE(a, sorted);  // shuffled
  EXPECT_EQ(epoch_order(1000, 7, 0, false), sorted);
}

TEST(Sampler, EverySampleOncePerEpochOverOneTwoThreeRanks) {
  for (std::size_t n : {103u, 96u, 5u}) {
    for (int ranks = 1; ranks <= 3; ++ranks) {
      const int batch = 8;
      const auto order = epoch_order(n, 3, 2, true);
      std::vector<int> seen(n, 0);
      const std::size_t steps = steps_per_epoch(n, batch, ranks);
      EXPECT_EQ(steps, (n + std::size_t(batch * ranks) - 1) / std::size_t(batch * ranks));
      for (int r = 0; r < ranks; ++r) {
        const auto batches = rank_batches(order, batch, r, ranks);
        ASSERT_EQ(batches.size(), steps) << "every rank runs the same number of steps";
        for (std::size_t k = 0; k < batches.size(); ++k) {
          EXPECT_LE(batches[k].size(), std::size_t(batch));
          if (k + 1 < batches.size()) {
            EXPECT_EQ(batches[k].size(), std::size_t(batch)) << "only the last may be short";
          }
          for (std::uint32_t i : batches[k]) ++seen[i];
        }
      }
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << "sample " << i << " n " << n << " ranks " << ranks;
    }
  }
}

namespace {
ImageSet small_set(int n, int channels, int side) {
  ImageSet s;
  s.channels = channels;
  s.height = s.width = side;
  for (int i = 0; i < n; ++i) {
    s.labels.push_back(i % 10);
    for (std::size_t k = 0; k < s.image_bytes(); ++k) s.pixels.push_back(static_cast<std::uint8_t>((i * 31 + k * 3) % 256));
  }
  return s;
}
}  // namespace

TEST(BatchLoader, NormalizesAndPads) {
  const ImageSet s = small_set(4, 1, 2);
  Normalization norm;
  norm.mean = {0.5f};
  norm.stddev = {0.25f};
  PipelineOptions o;
  o.out_size = 4;
  o.prefetch = 0;
  BatchLoader loader(s, norm, o);
  std::vector<float> out(16);
  loader.decode(1, 0, out.data());
  const float zero = (0.0f - 0.5f) / 0.25f;
  EXPECT_FLOAT_EQ(out[0], zero);  // padding is a zero pixel
  EXPECT_FLOAT_EQ(out[15], zero);
  EXPECT_NEAR(out[1 * 4 + 1], (s.image(1)[0] / 255.0f - 0.5f) / 0.25f, 1e-5);
  EXPECT_NEAR(out[2 * 4 + 2], (s.image(1)[3] / 255.0f - 0.5f) / 0.25f, 1e-5);
  o.out_size = 1;
  EXPECT_THROW(BatchLoader(s, norm, o), UsageError);

  const Normalization st = channel_stats(small_set(50, 3, 4));
  ASSERT_EQ(st.mean.size(), 3u);
  for (int c = 0; c < 3; ++c) {
    EXPECT_GT(st.mean[c], 0.2f);
    EXPECT_LT(st.mean[c], 0.8f);
    EXPECT_GT(st.stddev[c], 0.1f);
  }
}

TEST(BatchLoader, PrefetchCacheAndAugmentationGiveTheSameBatches) {
  const ImageSet s = small_set(37, 3, 8);
  const Normalization norm = channel_stats(s);
  auto epoch_batches = [&](PipelineOptions o, std::uint64_t epoch) {
    BatchLoader loader(s, norm, o);
    std::vector<Batch> out;
    for (int rep = 0; rep < 2; ++rep) {  // the second pass reads the cache when it is on
      loader.start_epoch(epoch, rank_batches(epoch_order(s.size(), 5, epoch, true), 8, 0, 1));
      out.clear();
      for (std::size_t k = 0; k < steps_per_epoch(s.size(), 8, 1); ++k) out.push_back(loader.next(nullptr));
      EXPECT_THROW(loader.next(nullptr), std::logic_error);
    }
    return out;
  };
  PipelineOptions base;
  base.prefetch = 0;
  base.augment = true;
  base.seed = 9;
  const auto ref = epoch_batches(base, 1);
  ASSERT_EQ(ref.size(), 5u);
  EXPECT_EQ(ref.back().size, 37 - 32);
  for (int prefetch : {0, 1, 3})
    for (bool cache : {false, true}) {
      PipelineOptions o = base;
      o.prefetch = prefetch;
      o.cache = cache;
      const auto got = epoch_batches(o, 1);
      ASSERT_EQ(got.size(), ref.size());
      for (std::size_t k = 0; k < ref.size(); ++k) {
        EXPECT_EQ(got[k].labels, ref[k].labels);
        EXPECT_EQ(got[k].images, ref[k].images) << "prefetch " << prefetch << " cache " << cache;
      }
    }
  // Augmentation changes with the epoch and differs from the plain image somewhere.
  BatchLoader plain(s, norm, PipelineOptions{0, false, 4, false, 0, 9});
  BatchLoader aug(s, norm, base);
  std::vector<float> p(s.image_bytes()), a0(s.image_bytes()), a1(s.image_bytes());
  int differ = 0, differ_epochs = 0;
  for (std::uint32_t i = 0; i < s.size(); ++i) {
    plain.decode(i, 0, p.data());
    aug.decode(i, 0, a0.data());
    aug.decode(i, 1, a1.data());
    differ += p != a0;
    differ_epochs += a0 != a1;
  }
  EXPECT_GT(differ, 20);
  EXPECT_GT(differ_epochs, 20);
}

// Sharded workers (hpcnn-scale --data, sync): over the W workers every training image exactly once
// per epoch when B x W divides n, reshuffled every epoch from the shared seed; otherwise the
// n mod (B x W) left over are different images each epoch and the rest are still taken once.
TEST(WorkerBatches, ShardsCoverEveryImageOncePerEpoch) {
  for (int workers : {1, 2, 3, 4})
    for (std::size_t n : {std::size_t(120), std::size_t(127)}) {
      const int batch = 5;
      const std::size_t steps = full_steps_per_epoch(n, batch, workers);
      EXPECT_EQ(steps, n / (5 * std::size_t(workers)));
      std::vector<std::vector<std::uint32_t>> first_epoch;
      for (std::uint64_t epoch : {0u, 1u}) {
        std::vector<int> seen(n, 0);
        std::vector<std::uint32_t> order;  // worker 0's samples, for the reshuffle check
        for (int w = 0; w < workers; ++w) {
          const auto b = worker_batches(Sharding::Shard, n, batch, w, workers, 11, epoch, true);
          ASSERT_EQ(b.size(), steps);
          for (const auto& step : b) {
            ASSERT_EQ(step.size(), std::size_t(batch));  // full batches only
            for (std::uint32_t i : step) ++seen[i];
          }
          if (w == 0) for (const auto& step : b) order.insert(order.end(), step.begin(), step.end());
        }
        const auto used = static_cast<std::size_t>(std::count(seen.begin(), seen.end(), 1));
        EXPECT_EQ(used, steps * batch * workers) << n << " images, " << workers << " workers";
        EXPECT_EQ(std::count_if(seen.begin(), seen.end(), [](int c) { return c > 1; }), 0);
        if (n % (5 * workers) == 0) {
          EXPECT_EQ(used, n);
        }
        first_epoch.push_back(order);
      }
      EXPECT_NE(first_epoch[0], first_epoch[1]) << "not reshuffled";
      // The union of one step's shards is the 1-rank batch of B x W at that step (the equivalence
      // hpcnn-scale --data relies on: P workers x B == 1 rank x P*B on the same order).
      const auto one = rank_batches(epoch_order(n, 11, 0, true), batch * workers, 0, 1);
      for (std::size_t k = 0; k < steps; ++k) {
        std::vector<std::uint32_t> all;
        for (int w = 0; w < workers; ++w) {
          const auto b = worker_batches(Sharding::Shard, n, batch, w, workers, 11, 0, true);
          all.insert(all.end(), b[k].begin(), b[k].end());
        }
        EXPECT_EQ(all, one[k]);
      }
    }
}

// Whole-set workers (ref. [4]'s async TensorFlow, docs/EXPERIMENTS.md): each its own permutation,
// 1/W of the set per epoch, no image twice within one worker's epoch; the workers' choices differ.
TEST(WorkerBatches, WholeSetWorkersDrawTheirOwnPermutations) {
  const std::size_t n = 90;
  const auto w0 = worker_batches(Sharding::Whole, n, 6, 0, 3, 4, 0, true);
  const auto w1 = worker_batches(Sharding::Whole, n, 6, 1, 3, 4, 0, true);
  ASSERT_EQ(w0.size(), 5u);
  std::vector<std::uint32_t> a, b;
  for (const auto& s : w0) a.insert(a.end(), s.begin(), s.end());
  for (const auto& s : w1) b.insert(b.end(), s.begin(), s.end());
  EXPECT_NE(a, b);
  std::sort(a.begin(), a.end());
  EXPECT_EQ(std::adjacent_find(a.begin(), a.end()), a.end()) << "an image twice in one worker's epoch";
  EXPECT_EQ(worker_batches(Sharding::Whole, n, 6, 0, 3, 4, 0, true), w0);  // deterministic
  EXPECT_NE(worker_batches(Sharding::Whole, n, 6, 0, 3, 4, 1, true), w0);  // reshuffled per epoch
  EXPECT_THROW(worker_batches(Sharding::Whole, n, 6, 3, 3, 4, 0, true), std::invalid_argument);
}

// Samples read from the files at their offsets are the decoded set's, every read counted; the
// loader with the files set reads once per use (no cache: every epoch again).
TEST(SampleFiles, ReadsEverySampleFromTheFilesAndCountsTheReads) {
  TempDir d;
  const fs::path idx = fs::path(d.path()) / "idx", c10 = fs::path(d.path()) / "c10";
  fs::create_directories(idx);
  fs::create_directories(c10);
  write((idx / "train-images-idx3-ubyte").string(), idx_images(9, 28, 28));
  write((idx / "train-labels-idx1-ubyte").string(), idx_labels(9));
  write((idx / "t10k-images-idx3-ubyte").string(), idx_images(2, 28, 28));
  write((idx / "t10k-labels-idx1-ubyte").string(), idx_labels(2));
  for (int k = 1; k <= 5; ++k)
    write((c10 / ("data_batch_" + std::to_string(k) + ".bin")).string(), cifar_records(2, false, k));
  write((c10 / "test_batch.bin").string(), cifar_records(1, false));
  for (const fs::path& dir : {idx, c10}) {
    const DataSet ds = load_dataset(dir.string());
    SampleFiles files(ds);
    ASSERT_EQ(files.size(), ds.train.size());
    Bytes px(ds.train.image_bytes());
    for (std::size_t i = 0; i < ds.train.size(); ++i) {
      files.read(i, px.data());
      EXPECT_TRUE(std::equal(px.begin(), px.end(), ds.train.image(i))) << dir << " sample " << i;
    }
    EXPECT_EQ(files.reads(), ds.train.size());
    EXPECT_EQ(files.bytes(), ds.train.size() * ds.train.image_bytes());
    EXPECT_THROW(files.read(ds.train.size(), px.data()), RuntimeError);

    // Through the loader: the same batches as from memory, and a read per sample per epoch.
    PipelineOptions o;
    o.prefetch = 1;
    PipelineOptions from_files = o;
    from_files.files = &files;
    const Normalization norm = channel_stats(ds.train);
    BatchLoader mem(ds.train, norm, o), disk(ds.train, norm, from_files);
    const std::uint64_t before = files.reads();
    for (std::uint64_t epoch : {0u, 1u}) {
      const auto batches = rank_batches(epoch_order(ds.train.size(), 3, epoch, true), 4, 0, 1);
      mem.start_epoch(epoch, batches);
      disk.start_epoch(epoch, batches);
      for (std::size_t k = 0; k < batches.size(); ++k) EXPECT_EQ(mem.next(nullptr).images, disk.next(nullptr).images);
    }
    EXPECT_EQ(files.reads() - before, 2 * ds.train.size());
  }
}

// A data file that shrinks or changes under a running training: the read or the epoch's check
// says which file and what happened (StorageError), and the loader hands over batches that carry
// the failure, with zeros from it on, instead of throwing out of the training step.
TEST(SampleFiles, AFileThatShrinksOrChangesIsAStorageErrorCarriedByTheBatches) {
  TempDir d;
  const fs::path idx = fs::path(d.path()) / "idx", images = idx / "train-images-idx3-ubyte";
  fs::create_directories(idx);
  write(images.string(), idx_images(8, 28, 28));
  write((idx / "train-labels-idx1-ubyte").string(), idx_labels(8));
  write((idx / "t10k-images-idx3-ubyte").string(), idx_images(2, 28, 28));
  write((idx / "t10k-labels-idx1-ubyte").string(), idx_labels(2));
  const DataSet ds = load_dataset(idx.string());
  const std::size_t image = ds.train.image_bytes();
  const auto says = [](const std::function<void()>& f, const std::vector<std::string>& needles) {
    try {
      f();
      ADD_FAILURE() << "no StorageError for " << needles.front();
    } catch (const StorageError& e) {
      for (const std::string& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
    }
  };
  SampleFiles files(ds);
  Bytes px(image);
  EXPECT_NO_THROW(files.check_unchanged());
  PipelineOptions o;
  o.prefetch = 0;
  o.files = &files;
  BatchLoader loader(ds.train, channel_stats(ds.train), o);
  loader.start_epoch(1, {{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 2, 3}});
  const Batch whole = loader.next(nullptr);
  EXPECT_TRUE(whole.storage_error.empty()) << whole.storage_error;

  fs::resize_file(images, 16 + 4 * image);  // samples 4-7 are gone
  files.read(3, px.data());
  says([&] { files.read(5, px.data()); },
       {images.string(), "sample 5", "past the end", std::to_string(16 + 4 * image) + " bytes"});
  says([&] { files.check_unchanged(); }, {images.string(), "changed size", std::to_string(16 + 8 * image)});

  // Batch 1 (samples 4-7) fails at its first sample and is zeros; batch 2 (0-3 again) is not
  // read any more, and carries the failure too.
  const std::uint64_t before = files.reads();
  const Batch cut = loader.next(nullptr), after = loader.next(nullptr);
  EXPECT_EQ(files.reads(), before);
  EXPECT_NE(cut.storage_error.find(images.string()), std::string::npos) << cut.storage_error;
  EXPECT_EQ(after.storage_error, cut.storage_error);
  EXPECT_TRUE(std::all_of(cut.images.begin(), cut.images.end(), [](float v) { return v == 0.0f; }));
  EXPECT_TRUE(std::all_of(after.images.begin(), after.images.end(), [](float v) { return v == 0.0f; }));
  EXPECT_EQ(cut.labels.size(), 4u);

  // A new epoch's first batch checks the files: a file rewritten to its old size is caught there.
  write(images.string(), idx_images(8, 28, 28));
  SampleFiles fresh(ds);
  o.files = &fresh;
  o.prefetch = 1;
  BatchLoader checked(ds.train, channel_stats(ds.train), o);
  checked.start_epoch(0, {{0, 1}});
  EXPECT_TRUE(checked.next(nullptr).storage_error.empty());
  struct timespec later[2] = {{0, UTIME_OMIT}, {1, 0}};  // the modification time moves, the size stays
  ASSERT_EQ(utimensat(AT_FDCWD, images.c_str(), later, 0), 0);
  checked.start_epoch(1, {{0, 1}});
  const Batch b = checked.next(nullptr);
  EXPECT_NE(b.storage_error.find("rewritten during the run"), std::string::npos) << b.storage_error;
}

// A gzip set is decompressed once into an unnamed scratch copy: the samples read from it are the
// decoded set's, the decompression is counted apart from the reads, and the scratch folder holds no
// name at any time (nothing to leave behind however the process ends).
TEST(SampleFiles, ReadsGzipFilesFromUnnamedDecompressedCopies) {
  TempDir d, scratch;
  const fs::path idx = fs::path(d.path()) / "idx", c10 = fs::path(d.path()) / "c10";
  fs::create_directories(idx);
  fs::create_directories(c10);
  const Bytes images = idx_images(9, 28, 28);
  write((idx / "train-images-idx3-ubyte.gz").string(), gzip(images));
  write((idx / "train-labels-idx1-ubyte.gz").string(), gzip(idx_labels(9)));
  write((idx / "t10k-images-idx3-ubyte").string(), idx_images(2, 28, 28));
  write((idx / "t10k-labels-idx1-ubyte").string(), idx_labels(2));
  std::uint64_t cifar_bytes = 0;
  for (int k = 1; k <= 5; ++k) {  // the first two gzip-compressed, the others not
    const Bytes records = cifar_records(2, false, k);
    const std::string name = (c10 / ("data_batch_" + std::to_string(k) + ".bin")).string();
    write(name, k <= 2 ? gzip(records) : records);
    if (k <= 2) cifar_bytes += records.size();
  }
  write((c10 / "test_batch.bin").string(), cifar_records(1, false));
  EXPECT_EQ(gzip_inflated_size((idx / "train-images-idx3-ubyte.gz").string()), images.size());
  EXPECT_EQ(gzip_inflated_size((idx / "t10k-images-idx3-ubyte").string()), 0u);
  const std::pair<fs::path, std::pair<std::size_t, std::uint64_t>> sets[] = {{idx, {1, images.size()}},
                                                                             {c10, {2, cifar_bytes}}};
  for (const auto& [dir, copies] : sets) {
    const DataSet ds = load_dataset(dir.string());
    const auto before = std::chrono::steady_clock::now();
    SampleFiles files(ds, scratch.path());
    const double constructed = std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
    EXPECT_EQ(files.decompressed_files(), copies.first) << dir;
    EXPECT_EQ(files.decompressed_bytes(), copies.second) << dir;
    // The decompression happened, and inside the constructor's time.
    EXPECT_GT(files.decompress_seconds(), 0.0) << dir;
    EXPECT_LE(files.decompress_seconds(), constructed) << dir;
    EXPECT_TRUE(fs::is_empty(scratch.path())) << "a decompressed copy has a name in " << scratch.path();
    Bytes px(ds.train.image_bytes());
    for (std::size_t i = 0; i < ds.train.size(); ++i) {
      files.read(i, px.data());
      EXPECT_TRUE(std::equal(px.begin(), px.end(), ds.train.image(i))) << dir << " sample " << i;
    }
    EXPECT_EQ(files.reads(), ds.train.size());  // decompressing is no sample read
  }
  // Uncompressed files need no scratch space, whatever the folder.
  fs::remove(c10 / "data_batch_1.bin");
  fs::remove(c10 / "data_batch_2.bin");
  write((c10 / "data_batch_1.bin").string(), cifar_records(2, false, 1));
  write((c10 / "data_batch_2.bin").string(), cifar_records(2, false, 2));
  EXPECT_NO_THROW(SampleFiles::check_scratch_space(load_dataset(c10.string()), 1000, "/nonexistent"));
  SampleFiles uncompressed(load_dataset(c10.string()), "/nonexistent");
  EXPECT_EQ(uncompressed.decompressed_files(), 0u);
  // Too little space, or no folder: one line naming the folder, before anything is written.
  const DataSet gz = load_dataset(idx.string());
  EXPECT_NO_THROW(SampleFiles::check_scratch_space(gz, 4, scratch.path()));
  try {
    check_scratch_space(scratch.path(), std::uint64_t{1} << 62, "decompressed copies");
    ADD_FAILURE() << "4 EiB fit";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find(scratch.path() + ": decompressed copies need 4398046511104.0 MiB"), std::string::npos)
        << e.what();
  }
  try {
    SampleFiles files(gz, scratch.path() + "/missing");
    ADD_FAILURE() << "a missing scratch folder accepted";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("/missing: scratch folder"), std::string::npos) << e.what();
  }
}

// Cold reads: dropping the files' pages leaves (almost) none of them in the page cache, and reading
// every sample brings them back (the reads went to the storage); a file system that keeps its
// files in memory (tmpfs) is refused, naming the file, the folder of gzip copies likewise.
TEST(PageCache, DroppedFilesAreReadFromTheStorageAndTmpfsIsRefused) {
  TempDir d;
  const fs::path idx = fs::path(d.path()) / "idx";
  fs::create_directories(idx);
  write((idx / "train-images-idx3-ubyte").string(), idx_images(2000, 28, 28));  // 1.5 MiB
  write((idx / "train-labels-idx1-ubyte").string(), idx_labels(2000));
  write((idx / "t10k-images-idx3-ubyte").string(), idx_images(2, 28, 28));
  write((idx / "t10k-labels-idx1-ubyte").string(), idx_labels(2));
  const DataSet ds = load_dataset(idx.string());
  SampleFiles files(ds);
  if (files.residency().fraction() <= kColdResidentLimit)
    GTEST_SKIP() << d.path() << ": a file just written is not in the page cache here";
  EXPECT_GT(files.residency().fraction(), 0.9);  // written and loaded a moment ago
  try {
    SampleFiles::check_cold_storage(ds);
  } catch (const RuntimeError& e) {
    GTEST_SKIP() << "the temporary folder cannot be read cold: " << e.what();
  }
  const Residency left = files.drop_pages();
  EXPECT_LE(left.fraction(), kColdResidentLimit);
  EXPECT_EQ(left.bytes, 16u + 2000u * 28 * 28);
  EXPECT_LE(files.residency().fraction(), kColdResidentLimit);
  Bytes px(ds.train.image_bytes());
  for (std::size_t i = 0; i < ds.train.size(); ++i) files.read(i, px.data());
  EXPECT_GT(files.residency().fraction(), 0.9) << "the reads did not bring the pages back";

  std::error_code no_shm;
  if (!fs::is_directory("/dev/shm", no_shm)) GTEST_SKIP() << "no /dev/shm to try a tmpfs on";
  std::string tmpl = "/dev/shm/hpcnn_test_data_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const fs::path shm = tmpl;
  struct Removed {
    fs::path dir;
    ~Removed() { fs::remove_all(dir); }
  } removed{shm};
  fs::copy(idx, shm / "idx", fs::copy_options::recursive);
  const auto refused = [](const std::function<void()>& f, const std::string& needle) {
    try {
      f();
      ADD_FAILURE() << "accepted for cold reads: " << needle;
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("tmpfs keeps them"), std::string::npos) << e.what();
    }
  };
  const DataSet in_memory = load_dataset((shm / "idx").string());
  refused([&] { SampleFiles::check_cold_storage(in_memory); }, (shm / "idx" / "train-images-idx3-ubyte").string());
  refused([&] { SampleFiles(in_memory).drop_pages(); }, (shm / "idx" / "train-images-idx3-ubyte").string());
  // gzip files are read from copies in the scratch folder: a tmpfs scratch folder is refused.
  const fs::path gz = fs::path(d.path()) / "gz";
  fs::create_directories(gz);
  write((gz / "train-images-idx3-ubyte.gz").string(), gzip(idx_images(20, 28, 28)));
  write((gz / "train-labels-idx1-ubyte.gz").string(), gzip(idx_labels(20)));
  write((gz / "t10k-images-idx3-ubyte").string(), idx_images(2, 28, 28));
  write((gz / "t10k-labels-idx1-ubyte").string(), idx_labels(2));
  const DataSet compressed = load_dataset(gz.string());
  EXPECT_NO_THROW(SampleFiles::check_cold_storage(compressed, d.path()));
  refused([&] { SampleFiles::check_cold_storage(compressed, shm.string()); }, "in " + shm.string());
}

// Hostile input: a set that cannot fit in the memory the node has is refused before it
// is decoded, naming the file and the sizes; a header that declares more than the file holds is
// refused whatever the limit.
// The data folder's file system, as the record names it: the longest mount point above the folder's
// real path (escaped names decoded, a later mount over the same point wins), FUSE's subtype kept.
TEST(PageCache, TheDataFoldersFileSystemIsTheLongestMountAboveIt) {
  TempDir d;
  const std::string base = fs::canonical(d.path()).string();
  fs::create_directories(base + "/net data/idx");
  fs::create_directories(base + "/netdata2");
  const std::string table = base + "/mountinfo";
  std::ofstream(table) << "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                        << "40 22 0:50 / " << base << "/net\\040data rw,nosuid - fuse.sshfs host:/export rw,user_id=0\n"
                        << "41 22 0:51 / " << base << "/netdata2 rw - tmpfs tmpfs rw\n"
                        << "42 41 0:52 / " << base << "/netdata2 rw master:7 - nfs4 server:/x rw\n";
  EXPECT_EQ(file_system_type(base + "/net data/idx", table), "fuse.sshfs");
  EXPECT_EQ(file_system_type(base + "/net data/../netdata2", table), "nfs4");
  EXPECT_EQ(file_system_type(base, table), "ext4");
  EXPECT_EQ(file_system_type(base + "/missing", table), "");
  EXPECT_EQ(file_system_type(base, base + "/no-such-table"), "");
  EXPECT_FALSE(file_system_type(base).empty());  // this process's own table names /tmp's
}

TEST(HostileData, SetLargerThanTheMemoryLimitIsRefusedBeforeDecoding) {
  TempDir d;
  write(d.file("i"), idx_images(10, 28, 28));  // 7840 pixel bytes, 7856 file bytes
  write(d.file("l"), idx_labels(10));
  // image file bytes (the pixels, header dropped in place) + int32 labels + label file bytes
  // = 7856 + 40 + 18
  EXPECT_EQ(read_idx_pair(d.file("i"), d.file("l"), 7914).size(), 10u);
  try {
    read_idx_pair(d.file("i"), d.file("l"), 7913);
    ADD_FAILURE() << "a set one byte over the limit was decoded";
  } catch (const RuntimeError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(d.file("i") + ": decoding needs", 0), 0u) << msg;
    EXPECT_NE(msg.find("10 images of 28x28 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("of memory available"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  // 2^20 images of 4096x4096 declared in a 16-byte header: refused on its size, limit or not.
  Bytes huge = {0, 0, 8, 3};
  put32(huge, 1u << 20);
  put32(huge, 4096);
  put32(huge, 4096);
  write(d.file("huge"), huge);
  expect_idx_error(d.file("huge"), d.file("l"), d.file("huge"), "absurd size");
  // CIFAR: the limit holds over the files of a set together.
  write(d.file("b1"), cifar_records(2, false));
  write(d.file("b2"), cifar_records(2, false));
  const std::size_t record = 1 + 3072;
  EXPECT_EQ(read_cifar(CifarKind::Cifar10, {d.file("b1"), d.file("b2")}, 2 * record + 4 * (3072 + 4)).size(), 4u);
  try {
    read_cifar(CifarKind::Cifar10, {d.file("b1"), d.file("b2")}, 2 * record + 4 * (3072 + 4) - 1);
    ADD_FAILURE() << "CIFAR set over the limit was decoded";
  } catch (const RuntimeError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(d.file("b2") + ": decoding needs", 0), 0u) << msg;
    EXPECT_NE(msg.find("4 images of 3x32x32"), std::string::npos) << msg;
  }
  // load_dataset: the test set gets what the training set left.
  const fs::path set = fs::path(d.path()) / "set";
  fs::create_directory(set);
  write((set / "train-images-idx3-ubyte").string(), idx_images(10, 28, 28));
  write((set / "train-labels-idx1-ubyte").string(), idx_labels(10));
  write((set / "t10k-images-idx3-ubyte").string(), idx_images(10, 28, 28));
  write((set / "t10k-labels-idx1-ubyte").string(), idx_labels(10));
  EXPECT_EQ(load_dataset(set.string(), 0).test.size(), 10u);  // 0: no limit
  try {
    load_dataset(set.string(), 10000);  // the training set fits, both do not
    ADD_FAILURE() << "data set over the limit was decoded";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()).rfind((set / "t10k-images-idx3-ubyte").string() + ": decoding needs", 0), 0u)
        << e.what();
  }
}

// A symlink loop, a FIFO, a character device or a directory where a data file should be is said
// as what it is (not "missing"), and nothing blocks on the FIFO.
TEST(HostileData, WhatStandsWhereAFileShouldBeIsNamed) {
  TempDir d;
  const fs::path set = fs::path(d.path()) / "set";
  fs::create_directory(set);
  write((set / "train-labels-idx1-ubyte").string(), idx_labels(2));
  write((set / "t10k-images-idx3-ubyte").string(), idx_images(2, 4, 4));
  write((set / "t10k-labels-idx1-ubyte").string(), idx_labels(2));
  const std::string images = (set / "train-images-idx3-ubyte").string();
  const std::vector<std::pair<std::string, std::function<void()>>> cases = {
      {"is a FIFO", [&] { ASSERT_EQ(mkfifo(images.c_str(), 0600), 0); }},
      {"is a directory", [&] { fs::create_directory(images); }},
      {"is a character device", [&] { fs::create_symlink("/dev/zero", images); }},
      {"symlink loop",
       [&] {
         fs::create_symlink(images + ".other", images);
         fs::create_symlink(images, images + ".other");
       }},
      {"dangling symlink", [&] { fs::create_symlink(d.file("nowhere"), images); }},
  };
  for (const auto& [what, make] : cases) {
    make();
    for (const auto& read : std::vector<std::function<void()>>{[&] { load_dataset(set.string()); },
                                                               [&] { read_file_bytes(images); }}) {
      try {
        read();
        ADD_FAILURE() << what << ": read without error";
      } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), images + ": " + what);
      }
    }
    fs::remove_all(images + ".other");
    fs::remove_all(images);
  }
}
