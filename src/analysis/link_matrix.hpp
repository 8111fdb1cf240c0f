// The link test's matrices (hpcnn-allreduce --links: link_bw_gbs and link_time_us, [P][P], 0 where
// a pair was not measured) and how the population of pairs and nodes judges them: each pair
// against the median pair of the same night, each node by the share of its links that are slow.
// No MPI, no HDF5.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hpcnn {

// A name per rank from the hosts of the run (provenance hosts, one per rank): the host name where
// each host holds one rank (one rank per node, as the link test is meant to run), "host/rR" where a
// host holds several.
std::vector<std::string> rank_names(const std::vector<std::string>& hosts);
// names[r], or "rR" for a rank the names do not cover; a pair: "a-b".
std::string rank_name(const std::vector<std::string>& names, std::size_t r);
std::string pair_name(const std::vector<std::string>& names, std::size_t a, std::size_t b);

struct LinkSummary {
  std::size_t pairs = 0;           // measured pairs (bandwidth > 0)
  double bw_median_gbs = 0, bw_min_gbs = 0, time_median_us = 0;
  std::string slowest;             // "n2-n5": the pair of the lowest bandwidth
};
LinkSummary summarize_links(const std::vector<double>& bw_gbs, const std::vector<double>& time_us,
                            const std::vector<std::string>& names);

// A population of figures (nodes' paces, pairs' bandwidths) as its median and median absolute
// deviation, and the rule that names a member: below (1 - threshold) of the median AND at least
// kRobustScore robust deviations (1.4826 MAD) below it. The first is the practical size of a
// change, the second that it stands out of the population's own spread.
inline constexpr double kRobustScore = 3.5;
double median_of(std::vector<double> values);  // base/median.hpp's median, but 0 for no values (a matrix with no measured pair)
struct Spread {
  double median = 0, mad = 0;
  std::size_t count = 0;
};
Spread spread_of(const std::vector<double>& values);
bool stands_out_below(double value, const Spread& population, double threshold);

// The judgement of one matrix, against tonight's nodes and pairs and, where given, against a
// reference's pairs (the same size and rank count, pooled over its runs), by stands_out_below:
//  - a node is slow when its median link stands out below the nodes' median links (its own link or
//    NIC: all its links move, the others' medians barely), or below the reference's pairs; its
//    links below the threshold are told under it;
//  - a pair between two good nodes is slow when it stands out below the pairs between good nodes
//    (a cable, a switch port), or below the reference's pairs.
// More than half the nodes slow is the network's change, not a node's: then only pairs are named.
struct SlowPair {
  std::size_t a = 0, b = 0;
  double bw_gbs = 0, ratio = 0;  // ratio: to the median pair
  double reference_ratio = 0;    // to the reference's median pair (0: no reference)
};
struct SlowNode {
  std::size_t rank = 0;
  std::size_t slow_links = 0, links = 0;
  double median_ratio = 0;            // the median ratio of its links to the median pair
  double median_reference_ratio = 0;  // ... to the reference's median pair (0: no reference)
};
struct LinkJudgement {
  LinkSummary summary;
  double mad_gbs = 0;
  std::vector<SlowNode> nodes;   // worst first
  std::vector<SlowPair> pairs;   // slow pairs not explained by a slow node, worst first
  std::vector<SlowPair> all_slow;  // every slow pair, worst first
};
LinkJudgement judge_links(const std::vector<double>& bw_gbs, std::size_t ranks, const std::vector<std::string>& names,
                          double threshold, const Spread* reference = nullptr);

}  // namespace hpcnn
