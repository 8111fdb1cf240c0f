// MNIST / Fashion-MNIST idx files (gzipped or not): images "idx3" (magic 0x00000803, N x H x W
// unsigned bytes) and labels "idx1" (magic 0x00000801, N unsigned bytes); big-endian dimensions.
// Every header field, the file size and every label are checked before use; errors are
// RuntimeError("FILE: problem").
#pragma once

#include <string>

#include "data/image_set.hpp"

namespace hpcnn::data {

// Reads an images file and its labels file into one set (channels 1, classes 10). memory_limit:
// bytes the decoded set (with the file's bytes, held while decoding) may take, checked from the
// header before decoding (file_bytes.hpp's check_memory; 0: no limit).
ImageSet read_idx_pair(const std::string& images_path, const std::string& labels_path,
                       std::size_t memory_limit = 0);

}  // namespace hpcnn::data
