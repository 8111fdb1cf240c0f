// What reading samples from the files (hpcnn-scale --data without --cache) came to over the
// workers, for the point's record: the reads, and the gzip files decompressed into scratch copies
// before training (timed apart: the decompression is no part of any step's load time).
#pragma once

#include <mpi.h>

#include "data/sample_files.hpp"
#include "results/record.hpp"

namespace hpcnn {

struct FileReads {
  double reads = 0, bytes = 0;                                  // summed over the workers
  double decompressed_files = 0, decompressed_bytes = 0;        // one worker's copies
  double decompress_s = 0;                                      // the slowest worker's
};

// One worker's figures; zeros without files (--cache, or a parameter server).
FileReads file_reads_of(const data::SampleFiles* files);

// Over every rank of `comm` (collective): reads and bytes summed, the rest the largest.
FileReads gather_file_reads(const FileReads& mine, MPI_Comm comm);

// file_reads, file_read_bytes, samples_from (cache | files | decompressed copies), and with
// decompressed copies decompressed_files, decompressed_bytes and decompress_s.
void set_file_read_fields(Record& r, const FileReads& f, bool cache);

}  // namespace hpcnn
