// Decompressed copies of gzip data files, so that samples can be read at their offsets (one pread
// each) as from uncompressed files: hpcnn-scale --data without --cache on MNIST-style .gz files.
// torchvision decompresses once on download, next to the data set; here every worker decompresses
// once per point (hpcnn-scale --data) into scratch space instead, because the data set's folder may
// be read-only or shared by other jobs, and a copy there would outlive the run.
//
// A copy has no name: its file is unlinked the moment it is created and lives exactly as long as its
// descriptor. The kernel frees it on every way out of the process: a normal end, an exception, a
// stop signal, and also the SIGKILL with which mpirun ends the other ranks after an MPI_Abort, which
// no destructor would see. Nothing is ever left behind to clean up.
#pragma once

#include <cstdint>
#include <string>

namespace hpcnn::data {

// The folder copies go to: `requested` when given, else $TMPDIR, else /tmp (node-local on clusters,
// and emptied by the batch system after the job).
std::string scratch_dir(const std::string& requested = "");

// Whether the file at `path` starts with the gzip magic bytes (false when it cannot be read).
bool is_gzip_file(const std::string& path);

// The bytes a gzip file inflates to, from its trailer (ISIZE: exact for one gzip member of less
// than 4 GiB, as data set files are; a lower bound otherwise); 0 for any other file.
std::uint64_t gzip_inflated_size(const std::string& path);

// RuntimeError, one line, when `need_bytes` (described by `what`) are more than the space an
// unprivileged user may still write in `dir`, or when `dir` is not a usable folder.
void check_scratch_space(const std::string& dir, std::uint64_t need_bytes, const std::string& what);

// A descriptor (read + write, close-on-exec; the caller closes it) of an unnamed file in `dir`
// holding the inflated bytes of gzip file `path`. RuntimeError naming the files when `path` cannot
// be inflated (the readers' checks and size limit) or the copy cannot be written (a full disk).
int decompressed_copy(const std::string& path, const std::string& dir);

}  // namespace hpcnn::data
