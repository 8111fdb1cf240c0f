// Files that a crash, a full disk or a concurrent reader never sees half written: the content goes
// to a temporary beside the file, which is synced, renamed over the file, and the folder synced
// (the rename is durable once its folder is). Checkpoints, run journals, JUnit verdicts; result
// files use the same steps with their own never-overwrite rename (results/result_writer.cpp).
#pragma once

#include <string>
#include <string_view>

namespace hpcnn {

// fsync of a file, or of a folder (its entries). Throws RuntimeError naming the path.
void sync_path(const std::string& path);

// `bytes` become the file at `path`: after a failure (a full disk) the file is what it was, the
// temporary is removed, and RuntimeError names `what` ("the checkpoint") and the path.
void write_file_durably(const std::string& path, std::string_view bytes, const std::string& what);

}  // namespace hpcnn
