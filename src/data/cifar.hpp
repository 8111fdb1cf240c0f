// CIFAR-10 and CIFAR-100 binary files. CIFAR-10: records of 1 label byte + 3072 pixel bytes
// (32x32 red plane, green plane, blue plane). CIFAR-100: 1 coarse label byte + 1 fine label
// byte + 3072 pixel bytes; the fine label (100 classes) is used. Files are checked before use
// (size a whole number of records, labels in range); errors are RuntimeError("FILE: problem").
#pragma once

#include <string>
#include <vector>

#include "data/image_set.hpp"

namespace hpcnn::data {

enum class CifarKind { Cifar10, Cifar100 };

// Reads and concatenates the files (data_batch_1.bin ... or train.bin). memory_limit: bytes the
// decoded set may take, checked for each file before it is decoded (0: no limit).
ImageSet read_cifar(CifarKind kind, const std::vector<std::string>& paths, std::size_t memory_limit = 0);

}  // namespace hpcnn::data
