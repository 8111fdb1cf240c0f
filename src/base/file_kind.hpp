// What stands at a path where a regular file (a data set, a result file) is expected, said in
// words: "is a directory", "is a FIFO", "symlink loop"... so that a wrong path is reported as what
// it is, not as "missing", and a FIFO or a device is never opened (a FIFO would block the reader,
// /dev/zero would never end).
#pragma once

#include <string>

namespace hpcnn {

// "" for a regular file (through any symlinks), else why it is not one: "no such file", "is a
// directory", "is a FIFO", "is a character device", "is a block device", "is a socket",
// "symlink loop", "dangling symlink", or the system's reason ("permission denied" ...). Never
// opens the path.
std::string not_a_regular_file(const std::string& path);

}  // namespace hpcnn
