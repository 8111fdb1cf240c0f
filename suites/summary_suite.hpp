// hpcnn-summary: reads hpcnn result files and prints one table row per point (or per epoch, per
// operator, ... as the --table preset says), filtered (--where), sorted (--by), plotted (--plot)
// and compared with a baseline (--compare). Its options are an option table like every other
// executable's (harness/options.hpp), with the files as its positional arguments. Needs no MPI.
#pragma once

namespace hpcnn {

// Exit status: 0 all files read (and no regression); 1 a file could not be read (the others are
// still summarized), none was found, a regression or a baseline run without a current one, or
// gnuplot missing/failing; 2 bad command line.
int summary_main(int argc, char** argv);

}  // namespace hpcnn
