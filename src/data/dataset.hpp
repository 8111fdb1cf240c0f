// Real data sets found from what the user names: `--data DIR` detects the format from the files
// present (MNIST-style idx files, gzipped or not; CIFAR-10 or CIFAR-100 binary files), and a
// bare name (mnist, fashion-mnist, cifar10, cifar100) is looked up where distributions install
// data sets (Debian's dataset-fashion-mnist: /usr/share/datasets/fashion-mnist).
#pragma once

#include <string>
#include <vector>

#include "data/image_set.hpp"

namespace hpcnn::data {

struct DataSet {
  std::string name;    // mnist | fashion-mnist | cifar10 | cifar100
  std::string format;  // idx | cifar10-bin | cifar100-bin
  std::string dir;     // where the files were found
  std::vector<std::string> train_files, test_files;
  ImageSet train, test;
};

// The directories a bare name is looked up in, in order: $HPCNN_DATA/NAME,
// /usr/share/datasets/NAME, /usr/local/share/datasets/NAME.
std::vector<std::string> dataset_search_dirs(const std::string& name);
extern const char* const kDataSetNames;  // "mnist|fashion-mnist|cifar10|cifar100"

// Locates the files of `spec` (a directory or a bare name) without reading them. Throws
// UsageError listing what was looked for when nothing matches.
DataSet locate_dataset(const std::string& spec);

// locate_dataset + read and validate every file (RuntimeError "FILE: problem"). memory_limit: the
// bytes the decoded sets may take together, what the node has available (0: no limit); a set
// that would not fit is refused before it is decoded, naming the file and the sizes.
DataSet load_dataset(const std::string& spec, std::size_t memory_limit = 0);

}  // namespace hpcnn::data
