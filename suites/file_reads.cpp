#include "suites/file_reads.hpp"

#include <cstdint>
#include <string>

namespace hpcnn {

FileReads file_reads_of(const data::SampleFiles* files) {
  FileReads f;
  if (!files) return f;
  f.reads = static_cast<double>(files->reads());
  f.bytes = static_cast<double>(files->bytes());
  f.decompressed_files = static_cast<double>(files->decompressed_files());
  f.decompressed_bytes = static_cast<double>(files->decompressed_bytes());
  f.decompress_s = files->decompress_seconds();
  return f;
}

FileReads gather_file_reads(const FileReads& mine, MPI_Comm comm) {
  double sums[2] = {mine.reads, mine.bytes};
  double most[3] = {mine.decompressed_files, mine.decompressed_bytes, mine.decompress_s};
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, most, 3, MPI_DOUBLE, MPI_MAX, comm);
  return {sums[0], sums[1], most[0], most[1], most[2]};
}

void set_file_read_fields(Record& r, const FileReads& f, bool cache) {
  r.set("file_reads", static_cast<std::int64_t>(f.reads));
  r.set("file_read_bytes", static_cast<std::int64_t>(f.bytes));
  const bool copies = f.decompressed_files > 0;
  r.set("samples_from", std::string(cache ? "cache" : copies ? "decompressed copies" : "files"));
  if (!copies) return;
  r.set("decompressed_files", static_cast<std::int64_t>(f.decompressed_files));
  r.set("decompressed_bytes", static_cast<std::int64_t>(f.decompressed_bytes));
  r.set("decompress_s", f.decompress_s);
}

}  // namespace hpcnn
