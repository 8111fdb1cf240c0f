#include "data/dataset.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "data/cifar.hpp"
#include "data/file_bytes.hpp"
#include "data/idx.hpp"
#include "base/errors.hpp"

namespace hpcnn::data {

const char* const kDataSetNames = "mnist|fashion-mnist|cifar10|cifar100";

namespace {

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// dir/name or dir/name.gz, whichever exists ("" when neither).
std::string with_optional_gz(const std::string& dir, const std::string& name) {
  if (file_exists(dir + "/" + name)) return dir + "/" + name;
  if (file_exists(dir + "/" + name + ".gz")) return dir + "/" + name + ".gz";
  return "";
}

const char* const kIdxFiles[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                                  "t10k-labels-idx1-ubyte"};

// Fills `ds` when `dir` holds one of the formats; throws when it holds part of one.
bool detect(const std::string& dir, DataSet& ds) {
  // idx (MNIST, Fashion-MNIST)
  std::vector<std::string> idx;
  std::string missing;
  for (const char* f : kIdxFiles) {
    idx.push_back(with_optional_gz(dir, f));
    if (idx.back().empty()) missing.append(missing.empty() ? "" : ", ").append(f).append("[.gz]");
  }
  const auto found_idx = std::count_if(idx.begin(), idx.end(), [](const std::string& s) { return !s.empty(); });
  if (found_idx == 4) {
    ds.format = "idx";
    ds.train_files = {idx[0], idx[1]};
    ds.test_files = {idx[2], idx[3]};
    return true;
  }
  if (found_idx > 0) throw UsageError("--data " + dir + ": idx data set incomplete, missing " + missing);
  // CIFAR-10
  std::vector<std::string> c10;
  for (int k = 1; k <= 5; ++k) c10.push_back(dir + "/data_batch_" + std::to_string(k) + ".bin");
  const std::string c10_test = dir + "/test_batch.bin";
  const auto found_c10 = std::count_if(c10.begin(), c10.end(), file_exists) + (file_exists(c10_test) ? 1 : 0);
  if (found_c10 == 6) {
    ds.format = "cifar10-bin";
    ds.train_files = c10;
    ds.test_files = {c10_test};
    return true;
  }
  if (found_c10 > 0)
    throw UsageError("--data " + dir + ": CIFAR-10 data set incomplete (needs data_batch_1.bin ... data_batch_5.bin and test_batch.bin)");
  // CIFAR-100
  const std::string c100_train = dir + "/train.bin", c100_test = dir + "/test.bin";
  if (file_exists(c100_train) && file_exists(c100_test)) {
    ds.format = "cifar100-bin";
    ds.train_files = {c100_train};
    ds.test_files = {c100_test};
    return true;
  }
  if (file_exists(c100_train) || file_exists(c100_test))
    throw UsageError("--data " + dir + ": CIFAR-100 data set incomplete (needs train.bin and test.bin)");
  return false;
}

std::string name_for(const DataSet& ds, const std::string& spec) {
  if (ds.format == "cifar10-bin") return "cifar10";
  if (ds.format == "cifar100-bin") return "cifar100";
  return lower(spec + " " + ds.dir).find("fashion") != std::string::npos ? "fashion-mnist" : "mnist";
}

}  // namespace

std::vector<std::string> dataset_search_dirs(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* root = std::getenv("HPCNN_DATA"); root && *root) dirs.push_back(std::string(root) + "/" + name);
  dirs.push_back("/usr/share/datasets/" + name);
  dirs.push_back("/usr/local/share/datasets/" + name);
  return dirs;
}

DataSet locate_dataset(const std::string& spec) {
  if (spec.empty()) throw UsageError("--data: empty value");
  std::vector<std::string> candidates;
  const bool bare_name = spec.find('/') == std::string::npos && !is_dir(spec);
  if (bare_name) {
    const std::string names = std::string("|") + kDataSetNames + "|";
    if (names.find("|" + spec + "|") == std::string::npos)
      throw UsageError("--data: '" + spec + "' is neither a directory nor a known data set (" + kDataSetNames + ")");
    candidates = dataset_search_dirs(spec);
  } else {
    if (!is_dir(spec)) throw UsageError("--data: '" + spec + "' is not a directory");
    // The archives unpack into a subfolder: accept its parent too.
    candidates = {spec, spec + "/cifar-10-batches-bin", spec + "/cifar-100-binary"};
  }
  for (const std::string& dir : candidates) {
    if (!is_dir(dir)) continue;
    DataSet ds;
    ds.dir = dir;
    if (detect(dir, ds)) {
      ds.name = name_for(ds, spec);
      if (bare_name && ds.name != spec && !(spec == "mnist" && ds.name == "fashion-mnist"))
        throw UsageError("--data " + spec + ": " + dir + " holds " + ds.name + " files");
      return ds;
    }
  }
  std::string where;
  for (const std::string& d : candidates) where.append(where.empty() ? "" : ", ").append(d);
  throw UsageError("--data " + spec + ": no data set found in " + where +
                   " (looked for MNIST/Fashion-MNIST idx files train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz], "
                   "t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz]; CIFAR-10 data_batch_1..5.bin + test_batch.bin; "
                   "CIFAR-100 train.bin + test.bin)" +
                   (bare_name && spec == "fashion-mnist" ? "; Debian: apt-get install dataset-fashion-mnist" : ""));
}

namespace {

// What is left of the limit once `set` is held (at least 1 byte: 0 would mean no limit).
std::size_t left_after(std::size_t limit, const ImageSet& set) {
  if (limit == 0) return 0;
  const std::size_t held = set.pixels.size() + set.labels.size() * sizeof(std::int32_t);
  return held < limit ? limit - held : 1;
}

}  // namespace

DataSet load_dataset(const std::string& spec, std::size_t memory_limit) {
  DataSet ds = locate_dataset(spec);
  if (ds.format == "idx") {
    ds.train = read_idx_pair(ds.train_files[0], ds.train_files[1], memory_limit);
    ds.test = read_idx_pair(ds.test_files[0], ds.test_files[1], left_after(memory_limit, ds.train));
    if (ds.train.height != ds.test.height || ds.train.width != ds.test.width)
      throw RuntimeError(ds.test_files[0] + ": image size differs from " + ds.train_files[0]);
  } else {
    const CifarKind kind = ds.format == "cifar10-bin" ? CifarKind::Cifar10 : CifarKind::Cifar100;
    ds.train = read_cifar(kind, ds.train_files, memory_limit);
    ds.test = read_cifar(kind, ds.test_files, left_after(memory_limit, ds.train));
  }
  return ds;
}

}  // namespace hpcnn::data
