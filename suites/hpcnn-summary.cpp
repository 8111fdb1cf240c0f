// hpcnn-summary: tables, plots and comparisons of hpcnn result files (suites/summary_suite.hpp).
#include "suites/summary_suite.hpp"

int main(int argc, char** argv) { return hpcnn::summary_main(argc, argv); }
