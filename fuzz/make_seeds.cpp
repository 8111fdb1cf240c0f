// Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/) and the hand-made hostile
// cases of fuzz/regressions/ that can be made small, with the project's own writers where it has
// them (ResultWriter, Checkpoint::write) so the seeds are what the readers really meet.
// usage: fuzz/make_seeds SRCDIR/fuzz   (`make fuzz-seeds`; the files are committed, this program
// is how they were made and how to make them again after a format change)
#include <hdf5.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/crc32.hpp"
#include "harness/checkpoint.hpp"
#include "results/result_file.hpp"

namespace fs = std::filesystem;
using Bytes = std::string;

namespace {

void write_file(const fs::path& path, const Bytes& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw std::runtime_error("cannot write " + path.string());
  std::printf("%s (%zu bytes)\n", path.c_str(), bytes.size());
}

Bytes read_file(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

Bytes gzip(const Bytes& in) {
  z_stream z{};
  if (deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("zlib");
  Bytes out(deflateBound(&z, in.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("zlib deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void be32(Bytes& b, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b += static_cast<char>((v >> s) & 0xff);
}

Bytes idx_images(std::uint32_t n, std::uint32_t h, std::uint32_t w) {
  Bytes b("\0\0\x08\x03", 4);
  be32(b, n);
  be32(b, h);
  be32(b, w);
  for (std::uint32_t i = 0; i < n * h * w; ++i) b += static_cast<char>((i * 37) & 0xff);
  return b;
}

Bytes idx_labels(std::uint32_t n) {
  Bytes b("\0\0\x08\x01", 4);
  be32(b, n);
  for (std::uint32_t i = 0; i < n; ++i) b += static_cast<char>(i % 10);
  return b;
}

// The idx target's input: images length (4 bytes, little-endian), images, labels.
Bytes idx_input(const Bytes& images, const Bytes& labels) {
  Bytes b;
  for (int s = 0; s < 32; s += 8) b += static_cast<char>((images.size() >> s) & 0xff);
  return b + images + labels;
}

Bytes cifar_records(int n, bool cifar100) {
  Bytes b;
  for (int r = 0; r < n; ++r) {
    if (cifar100) b += static_cast<char>(r % 20);
    b += static_cast<char>(cifar100 ? (r * 7) % 100 : r % 10);
    for (int i = 0; i < 3072; ++i) b += static_cast<char>((i / 32 + r) & 0xff);
  }
  return b;
}

Bytes args(const std::vector<std::string>& list) {
  Bytes b;
  for (const std::string& a : list) b += a + '\0';
  return b;
}

hpcnn::ResultPoint point(const std::string& model, std::int64_t batch, std::vector<std::size_t> dims) {
  hpcnn::ResultPoint p;
  p.record.set("suite", std::string("hpcnn-train"));
  p.record.set("model", model);
  p.record.set("batch", batch);
  p.record.set("img_per_s", 123.5);
  std::size_t n = 1;
  for (std::size_t d : dims) n *= d;
  std::vector<double> data(n);
  for (std::size_t i = 0; i < n; ++i) data[i] = 0.01 * static_cast<double>(i + 1);
  p.arrays.push_back(hpcnn::make_array("iter_time_s", std::move(dims), std::move(data)));
  return p;
}

hpcnn::Provenance provenance() {
  hpcnn::Provenance prov;
  prov.suite = "hpcnn-train";
  prov.command_line = "hpcnn-train --batch 8";
  prov.reproducer = "hpcnn-train --batch 8";
  prov.hpcnn_version = "0.1.0";
  prov.start_time = prov.end_time = "2026-01-01T00:00:00Z";
  prov.hosts = {"node1"};
  prov.libraries = {{"hdf5", "1.10"}};
  prov.settings = {{"batch", "8"}};
  return prov;
}

fs::path result_file(const fs::path& dir, const std::string& stem, const std::vector<hpcnn::ResultPoint>& points) {
  hpcnn::ResultWriter w(dir.string(), hpcnn::ResultWriter::Named{stem, true});
  for (const hpcnn::ResultPoint& p : points) w.add_point(p);
  return w.commit(provenance());
}

// The checksum block rewritten to match the file, as a hostile writer would (docs/RESULTS.md).
Bytes recompute_checksum(Bytes bytes) {
  hpcnn::Crc32 crc;
  crc.add(bytes.data() + 512, bytes.size() - 512);
  char block[512] = {};
  std::snprintf(block, sizeof block, "hpcnn-result\nchecksum-block 1\nsize %llu\ncrc32 %08x\n",
                static_cast<unsigned long long>(bytes.size()), static_cast<unsigned>(crc.value()));
  bytes.replace(0, 512, block, 512);
  return bytes;
}

// Adds to point 000000 of a result file a chunked dataset that declares `dims` and stores nothing.
void add_declared_array(const fs::path& file, const std::string& name, const std::vector<hsize_t>& dims) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t g = H5Gopen2(f, "/points/000000", H5P_DEFAULT);
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  std::vector<hsize_t> chunk(dims.size(), 1);
  H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data());
  const hid_t set = H5Dcreate2(g, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (f < 0 || g < 0 || space < 0 || set < 0) throw std::runtime_error("cannot add " + name + " to " + file.string());
  H5Dclose(set);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Gclose(g);
  H5Fclose(f);
}

// The valid result files of the result_file corpus: written into the build folder by `make check`
// (fuzz/Makefile.inc), not kept in git, where result files are reference results only.
void result_corpus(const fs::path& corpus) {
  const fs::path tmp = fs::temp_directory_path() / ("hpcnn-make-seeds-" + std::to_string(::getpid()));
  write_file(corpus / "one_point.h5", read_file(result_file(tmp, "a", {point("lenet5", 8, {1, 3})})));
  write_file(corpus / "two_points.h5",
             read_file(result_file(tmp, "b", {point("lenet5", 8, {2, 2}), point("resnet18", 16, {1, 1})})));
  write_file(corpus / "no_points.h5", read_file(result_file(tmp, "c", {})));
  // The first byte of the checksum block changed: such a file must be refused, never read unchecked.
  Bytes unchecked = read_file(tmp / "a.h5");
  unchecked[0] = 'X';
  write_file(corpus / "header_byte_changed.h5", unchecked);
  fs::remove_all(tmp);
}

void result_regressions(const fs::path& fuzz) {
  const fs::path tmp = fs::temp_directory_path() / ("hpcnn-make-seeds-" + std::to_string(::getpid()));
  const fs::path regressions = fuzz / "regressions/result_file";
  // Hostile arrays, each with a recomputed checksum and with its block's magic broken.
  const struct {
    const char* name;
    std::vector<hsize_t> dims;
  } arrays[] = {{"array_2p40_elements", {hsize_t{1} << 40}},
                {"dims_product_overflows", {hsize_t{1} << 32, hsize_t{1} << 32}},
                {"dims_product_overflows_3d", {hsize_t{1} << 32, hsize_t{1} << 31, 4}}};
  for (const auto& a : arrays) {
    const fs::path f = result_file(tmp, a.name, {point("lenet5", 8, {1, 3})});
    add_declared_array(f, "iter_max_s_hostile", a.dims);
    const Bytes fixed = recompute_checksum(read_file(f));
    write_file(regressions / (std::string(a.name) + "_checksum_ok.bin"), fixed);
    Bytes no_block = fixed;
    no_block[0] = 'X';
    write_file(regressions / (std::string(a.name) + "_header_byte_changed.bin"), no_block);
  }
  fs::remove_all(tmp);
}

void checkpoint_seeds(const fs::path& fuzz) {
  const std::string settings = "hpcnn-train --data fuzz";  // kSettings of checkpoint_target.cpp
  const fs::path tmp = fs::temp_directory_path() / ("hpcnn-make-seeds-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  const fs::path corpus = fuzz / "corpus/checkpoint";
  hpcnn::Checkpoint full;
  full.put("epochs_done", std::int64_t{1});
  full.put("ranks", std::int64_t{1});
  full.put("params", std::vector<float>{0.5f, -1.25f, 3.0f, 0.0f});
  full.put("loss", std::vector<double>{2.3, 1.7});
  full.write((tmp / "full.ckpt").string(), settings);
  write_file(corpus / "full.ckpt", read_file(tmp / "full.ckpt"));
  hpcnn::Checkpoint().write((tmp / "empty.ckpt").string(), settings);
  write_file(corpus / "empty.ckpt", read_file(tmp / "empty.ckpt"));
  full.write((tmp / "other.ckpt").string(), "hpcnn-train --data other");
  write_file(corpus / "other_settings.ckpt", read_file(tmp / "other.ckpt"));
  fs::remove_all(tmp);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--result-corpus") {
    try {
      result_corpus(argv[2]);
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "make_seeds: %s\n", e.what());
      return 1;
    }
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SRCDIR/fuzz | --result-corpus DIR\n", argv[0]);
    return 2;
  }
  const fs::path fuzz = argv[1];
  try {
    const Bytes labels2 = idx_labels(2), images2 = idx_images(2, 2, 3);
    write_file(fuzz / "corpus/idx/two_2x3.bin", idx_input(images2, labels2));
    write_file(fuzz / "corpus/idx/one_28x28.bin", idx_input(idx_images(1, 28, 28), idx_labels(1)));
    write_file(fuzz / "corpus/idx/gzip_both.bin", idx_input(gzip(idx_images(3, 4, 4)), gzip(idx_labels(3))));
    write_file(fuzz / "corpus/idx/gzip_images.bin", idx_input(gzip(images2), labels2));
    write_file(fuzz / "corpus/idx/gzip_two_members.bin", idx_input(gzip(images2.substr(0, 9)) + gzip(images2.substr(9)), labels2));

    write_file(fuzz / "corpus/cifar/cifar10_one.bin", cifar_records(1, false));
    write_file(fuzz / "corpus/cifar/cifar100_one.bin", cifar_records(1, true));
    write_file(fuzz / "corpus/cifar/cifar10_three.gz", gzip(cifar_records(3, false)));

    write_file(fuzz / "corpus/options/defaults.args", args({}));
    write_file(fuzz / "corpus/options/lists.args", args({"--batch", "32,64", "--threads", "default,2", "--lr", "0.1", "--quiet"}));
    write_file(fuzz / "corpus/options/inline_and_positional.args",
               args({"--model=lenet5,resnet18", "--dataset", "mnist", "--where", "a=b", "--where=c=d", "f1", "--", "-f2"}));
    write_file(fuzz / "corpus/options/bounds.args",
               args({"--seed", "9000000000000000000", "--momentum", "0.5", "--layout", "nhwc", "--iters", "1e3"}));
    write_file(fuzz / "corpus/options/bad_value.args", args({"--batch", "64,,8", "--output"}));

    result_regressions(fuzz);
    checkpoint_seeds(fuzz);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
