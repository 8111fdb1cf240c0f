// hpcnn-summary --population: the night judged against itself, with no reference needed (the first
// night on a new cluster too).
//  - Nodes: every point of a one-node suite (hpcnn-train, hpcnn-infer, hpcnn-blas) that ran on
//    several nodes at once, one rank per node (or in waves of nodes: the files of one run with the
//    same settings), gives each node's delivered pace: its own timed iterations over its own time
//    (every rank does the same work; the ranks meet between iterations, outside the clock). Each
//    node against the median node of that point, and against its reference where one is given.
//  - Links: every link test (hpcnn-allreduce --links): each pair against the median pair of the
//    same test, each node by the share of its slow links (link_matrix.hpp).
// A point or test repeated in rounds of one run (an acceptance night's session) is judged on each
// node's or pair's best round, as --compare takes a point's best round; a link test of the same
// run on some of a test's hosts (a named pair measured again on its own) is one more round of those
// pairs. No MPI, no HDF5.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "results/result_file.hpp"

namespace hpcnn {

// The fewest nodes a point must have run on to be judged: with two, the median cannot tell which is off.
inline constexpr std::size_t kPopulationMinNodes = 3;

struct PopulationReport {
  std::vector<std::string> headings;  // one per judged test: sizes, pairs, the median pair
  std::vector<std::string> flagged;   // "n3: ...: REGRESSION", "link n2-n5: ...: REGRESSION"
  std::vector<std::string> passed;    // one per test with nothing flagged
  std::size_t tests = 0;   // link tests judged
  std::size_t points = 0;  // per-node points judged
  // JUnit's test cases: every node judged (by a per-node point or a link test) and every link test
  // ("links at 4 MiB over 8 ranks"), each with the lines that named it (none: it passed).
  std::map<std::string, std::vector<std::string>> nodes, link_tests;
  // For the page (hpcnn-summary --html): every per-node point's ratio of each node's pace to the
  // median node's, and every link test's matrix of ratios to the median pair (0: not measured),
  // with what was named.
  struct NodeMap {
    std::string label;                   // "hpcnn-train lenet5 dnnl fp32 batch 32"
    std::map<std::string, double> ratio;  // node -> pace / the median node's
    std::set<std::string> named;
  };
  struct LinkMap {
    std::string label;  // "links at 4 MiB over 8 ranks"
    std::vector<std::string> names;
    std::vector<double> ratio;  // [ranks][ranks]
    std::set<std::size_t> named_nodes;
    std::set<std::pair<std::size_t, std::size_t>> named_pairs;
  };
  std::vector<NodeMap> node_maps;
  std::vector<LinkMap> link_maps;
  double threshold = 0.1;
};

// threshold: the practical size of a change (0.1: a node or pair below 90% of the median).
// reference (optional): runs of the same set on nodes of the same class (a blessed reference): each
// node is also judged against the reference's nodes of the same point, pooled over its runs, and
// each pair against the reference's pairs of the same size and rank count, by the same rule. A node
// replaced by another of its class needs no reference of its own; a night on fewer than 3 nodes is
// judged against the reference alone.
PopulationReport judge_population(const std::vector<ResultRun>& runs, double threshold,
                                  const std::vector<ResultRun>* reference = nullptr);

// A reference is of one node class: UsageError naming the first run of `runs` measured on another
// machine (provenance machine: CPU model, cores, widest vector ISA) than the reference's, with both
// descriptions. `reference_name` is how the user named it (--compare's path). Runs that do not
// record their machine are not refused.
void check_reference_class(const std::vector<ResultRun>& runs, const std::vector<ResultRun>& reference,
                           const std::string& reference_name);

// The report as JUnit XML: a test suite "hpcnn population" of one test case per node and per link
// test, a failure per line that named it.
std::string population_junit(const PopulationReport& report);

}  // namespace hpcnn
