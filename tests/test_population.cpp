// A whole cluster judged against itself: the link test's schedule (every pair once, each round
// disjoint pairs), the link matrix's naming of a slow node and of a slow pair between good nodes,
// and hpcnn-summary --population's judgement of per-node points (each node against the median
// node, a node's best round) and of link tests, on files made here with known figures.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/errors.hpp"
#include "collectives/pair_schedule.hpp"
#include "analysis/link_matrix.hpp"
#include "analysis/population.hpp"
#include "results/bounded_series.hpp"
#include "results/record.hpp"
#include "results/result_file.hpp"

using namespace hpcnn;

namespace {

TEST(PairSchedule, EveryPairOnceInDisjointRounds) {
  for (int n = 1; n <= 33; ++n) {
    std::set<std::pair<int, int>> met;
    ASSERT_EQ(pair_rounds(n), n < 2 ? 0 : (n % 2 ? n : n - 1)) << n;
    for (int round = 0; round < pair_rounds(n); ++round) {
      int idle = 0;
      for (int r = 0; r < n; ++r) {
        const int p = round_partner(n, round, r);
        if (p < 0) {
          ++idle;
          continue;
        }
        ASSERT_NE(p, r) << "n " << n << " round " << round;
        ASSERT_EQ(round_partner(n, round, p), r) << "n " << n << " round " << round << ": not a pair";
        if (r < p) {
          EXPECT_TRUE(met.insert({r, p}).second) << "n " << n << ": pair " << r << "-" << p << " twice";
        }
      }
      EXPECT_EQ(idle, n % 2) << "n " << n << " round " << round << ": ranks left out";
    }
    EXPECT_EQ(met.size(), static_cast<std::size_t>(n * (n - 1) / 2)) << n;
  }
  EXPECT_EQ(round_partner(4, 3, 0), -1);  // past the last round
  EXPECT_EQ(round_partner(4, 0, 4), -1);  // no such rank
}

TEST(PairSchedule, AnOrderFromASeedStillMeetsEveryPairOnce) {
  EXPECT_EQ(schedule_order(5, 0), (std::vector<int>{0, 1, 2, 3, 4}));
  for (int n : {2, 3, 8, 9, 64}) {
    const std::vector<int> order = schedule_order(n, 42);
    EXPECT_EQ(std::set<int>(order.begin(), order.end()).size(), static_cast<std::size_t>(n)) << n << ": not a permutation";
    EXPECT_EQ(order, schedule_order(n, 42)) << n << ": the same seed gives another order";
    std::set<std::pair<int, int>> met;
    for (int round = 0; round < pair_rounds(n); ++round)
      for (int r = 0; r < n; ++r) {
        const int p = ordered_partner(order, round, r);
        if (p < 0) continue;
        ASSERT_EQ(ordered_partner(order, round, p), r) << "n " << n << " round " << round << ": not a pair";
        if (r < p) {
          EXPECT_TRUE(met.insert({r, p}).second) << "n " << n << ": pair " << r << "-" << p << " twice";
        }
      }
    EXPECT_EQ(met.size(), static_cast<std::size_t>(n * (n - 1) / 2)) << n;
  }
  // Other seeds put a pair beside other pairs: the first round's pairs differ.
  auto first_round = [](std::uint64_t seed) {
    const std::vector<int> order = schedule_order(8, seed);
    std::vector<int> partners;
    for (int r = 0; r < 8; ++r) partners.push_back(ordered_partner(order, 0, r));
    return partners;
  };
  EXPECT_NE(first_round(1), first_round(2));
  EXPECT_NE(first_round(0), first_round(1));
}

TEST(PairSchedule, SampledRoundsAreSpreadAndDistinct) {
  EXPECT_EQ(sampled_rounds(7, 0), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(sampled_rounds(7, 9), sampled_rounds(7, 0));
  EXPECT_EQ(sampled_rounds(255, 3), (std::vector<int>{0, 85, 170}));
  const std::vector<int> s = sampled_rounds(63, 16);
  EXPECT_EQ(std::set<int>(s.begin(), s.end()).size(), 16u);
}

// A P x P bandwidth matrix: every pair at `base`, then the changes.
std::vector<double> matrix(std::size_t n, double base) {
  std::vector<double> m(n * n, 0.0);
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b)
      if (a != b) m[a * n + b] = base * (1 + 0.01 * static_cast<double>((a * 7 + b * 3) % 5));  // 0-4% spread
  return m;
}
void set_pair(std::vector<double>& m, std::size_t n, std::size_t a, std::size_t b, double v) {
  m[a * n + b] = m[b * n + a] = v;
}
std::vector<std::string> hosts(std::size_t n) {
  std::vector<std::string> h;
  for (std::size_t k = 1; k <= n; ++k) h.push_back("n" + std::to_string(k));
  return h;
}

TEST(LinkMatrix, NamesTheNodeWhoseLinksAreSlow) {
  const std::size_t n = 8;
  std::vector<double> m = matrix(n, 1.0);
  for (std::size_t b = 0; b < n; ++b)
    if (b != 4) set_pair(m, n, 4, b, 0.5);  // n5's link at half rate
  const LinkJudgement j = judge_links(m, n, hosts(n), 0.1);
  ASSERT_EQ(j.nodes.size(), 1u);
  EXPECT_EQ(j.nodes[0].rank, 4u);
  EXPECT_EQ(j.nodes[0].slow_links, 7u);
  EXPECT_NEAR(j.nodes[0].median_ratio, 0.5, 0.03);
  EXPECT_TRUE(j.pairs.empty()) << "n5's slow pairs are told under n5";
  EXPECT_EQ(j.all_slow.size(), 7u);
  EXPECT_EQ(j.summary.pairs, 28u);
}

TEST(LinkMatrix, NamesASlowPairBetweenGoodNodes) {
  const std::size_t n = 8;
  std::vector<double> m = matrix(n, 2.0);
  set_pair(m, n, 1, 6, 0.9);  // a cable between n2 and n7
  const LinkJudgement j = judge_links(m, n, hosts(n), 0.1);
  EXPECT_TRUE(j.nodes.empty());
  ASSERT_EQ(j.pairs.size(), 1u);
  EXPECT_EQ(j.pairs[0].a, 1u);
  EXPECT_EQ(j.pairs[0].b, 6u);
  EXPECT_EQ(j.summary.slowest, "n2-n7");
}

TEST(LinkMatrix, AnEvenClusterNamesNothing) {
  const std::size_t n = 8;
  const LinkJudgement j = judge_links(matrix(n, 1.0), n, hosts(n), 0.1);
  EXPECT_TRUE(j.nodes.empty());
  EXPECT_TRUE(j.all_slow.empty());
}

TEST(LinkMatrix, APairBelowTheThresholdButWithinTheSpreadIsNotNamed) {
  // Pairs spread widely (a busy network): 85% of the median is within 3.5 robust deviations.
  const std::size_t n = 6;
  std::vector<double> m(n * n, 0.0);
  double v = 0.6;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b, v += 0.06) set_pair(m, n, a, b, v);
  const LinkJudgement j = judge_links(m, n, hosts(n), 0.1);
  EXPECT_TRUE(j.all_slow.empty()) << j.all_slow.size() << " pairs named; MAD " << j.mad_gbs;
}

TEST(LinkMatrix, RankNamesWhereHostsHoldSeveralRanks) {
  EXPECT_EQ(rank_names({"a", "b"}), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(rank_names({"a", "a", "b"}), (std::vector<std::string>{"a/r0", "a/r1", "b"}));
  EXPECT_EQ(pair_name({"a"}, 0, 3), "a-r3");
}

// A one-node suite's point run on `names` nodes at once: each node's iterations at its own pace.
ResultRun node_run(const std::vector<std::string>& names, const std::vector<double>& iter_s, const std::string& session) {
  ResultRun run;
  run.path = "/x/" + session + std::to_string(names.size()) + names.front() + ".h5";
  run.provenance.hosts = names;
  run.provenance.session = session;
  ResultPoint p;
  p.record.set("suite", std::string("hpcnn-train"));
  p.record.set("model", std::string("lenet5"));
  p.record.set("batch", std::int64_t{32});
  p.record.set("ranks", static_cast<std::int64_t>(names.size()));
  p.record.set("status", std::string("ok"));
  const std::size_t iters = 10;
  std::vector<double> data;
  for (double t : iter_s)
    for (std::size_t k = 0; k < iters; ++k) data.push_back(k == 3 ? 2 * t : t);  // a stall on every node alike
  p.arrays.push_back(make_array("iter_time_s", {names.size(), iters}, data));
  run.points.push_back(p);
  return run;
}

TEST(Population, NamesTheSlowNodeOfAPointRunInWaves) {
  // Waves of 2 nodes, one file each; n3 takes 30% longer per iteration.
  std::vector<ResultRun> runs = {node_run({"n1", "n2"}, {0.010, 0.0101}, "night"),
                                 node_run({"n3", "n4"}, {0.013, 0.0100}, "night"),
                                 node_run({"n5", "n6"}, {0.0099, 0.0102}, "night")};
  const PopulationReport r = judge_population(runs, 0.1);
  EXPECT_EQ(r.points, 1u);
  ASSERT_EQ(r.flagged.size(), 1u);
  EXPECT_EQ(r.flagged[0].rfind("n3: hpcnn-train lenet5 batch 32 0.77 of the nodes' median (6 nodes", 0), 0u) << r.flagged[0];
}

TEST(Population, NodesOfALongPointAreJudgedFromItsHistogram) {
  // A point of more iterations than a file keeps: its series stored as a histogram, each node's
  // mean pace exact from its sum.
  std::vector<ResultRun> runs = {node_run({"n1", "n2", "n3", "n4", "n5"}, {0.010, 0.0101, 0.013, 0.0100, 0.0099}, "night")};
  for (ResultRun& run : runs)
    for (ResultPoint& p : run.points) bound_series(p, 5);
  ASSERT_EQ(runs[0].points[0].arrays[0].name, "iter_time_s_bucket");
  const PopulationReport r = judge_population(runs, 0.1);
  EXPECT_EQ(r.points, 1u);
  ASSERT_EQ(r.flagged.size(), 1u);
  EXPECT_EQ(r.flagged[0].rfind("n3: hpcnn-train lenet5 batch 32 0.77 of the nodes' median (5 nodes", 0), 0u) << r.flagged[0];
}

TEST(Population, ANodesBestRoundCounts) {
  // Two rounds of one night: n3 was slow in one round only (interference that came and went).
  std::vector<ResultRun> runs = {node_run({"n1", "n2", "n3", "n4"}, {0.010, 0.0101, 0.015, 0.0100}, "night"),
                                 node_run({"n1", "n2", "n3", "n4"}, {0.0101, 0.010, 0.0101, 0.0102}, "night")};
  const PopulationReport r = judge_population(runs, 0.1);
  EXPECT_TRUE(r.flagged.empty()) << r.flagged.front();
  EXPECT_EQ(r.passed.size(), 1u);
}

TEST(Population, TwoNodesAreNotJudged) {
  const PopulationReport r = judge_population({node_run({"n1", "n2"}, {0.010, 0.020}, "night")}, 0.1);
  EXPECT_EQ(r.points, 0u);
  EXPECT_TRUE(r.flagged.empty());
}

TEST(Population, TwoNodesAreJudgedAgainstTheirReference) {
  // The reference: 4 nodes of the class, 2 runs; tonight 2 nodes, one 30% slower.
  const std::vector<ResultRun> reference = {node_run({"a1", "a2", "a3", "a4"}, {0.0100, 0.0101, 0.0099, 0.0100}, "ref-1"),
                                            node_run({"a1", "a2", "a3", "a4"}, {0.0101, 0.0100, 0.0100, 0.0102}, "ref-2")};
  const std::vector<ResultRun> tonight = {node_run({"n1", "n2"}, {0.0100, 0.013}, "night")};
  EXPECT_EQ(judge_population(tonight, 0.1).points, 0u) << "two nodes alone are not judged";
  const PopulationReport r = judge_population(tonight, 0.1, &reference);
  EXPECT_EQ(r.points, 1u);
  ASSERT_EQ(r.flagged.size(), 1u);
  EXPECT_NE(r.flagged[0].find("n2: hpcnn-train lenet5 batch 32 0.77 of its reference"), std::string::npos) << r.flagged[0];
}

TEST(Population, AReferenceOfAnotherNodeClassIsRefused) {
  std::vector<ResultRun> reference = {node_run({"a1", "a2", "a3"}, {0.0100, 0.0101, 0.0099}, "ref-1")};
  std::vector<ResultRun> tonight = {node_run({"n1", "n2"}, {0.0100, 0.0101}, "night")};
  reference[0].provenance.machine = "AMD EPYC 9654, 96 cores, avx512";
  tonight[0].provenance.machine = reference[0].provenance.machine;
  EXPECT_NO_THROW(check_reference_class(tonight, reference, "ref"));
  tonight[0].provenance.machine = "Intel Xeon 8480+, 56 cores, amx";
  try {
    check_reference_class(tonight, reference, "ref");
    ADD_FAILURE() << "a reference of another node class was accepted";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Intel Xeon 8480+"), std::string::npos) << what;
    EXPECT_NE(what.find("AMD EPYC 9654"), std::string::npos) << what;
  }
  tonight[0].provenance.machine.clear();  // a file that does not say
  EXPECT_NO_THROW(check_reference_class(tonight, reference, "ref"));
}

TEST(LinkMatrix, EveryPairSlowerThanTheReferenceIsTheNetworksChange) {
  const std::size_t n = 6;
  const Spread reference = spread_of(std::vector<double>(15, 1.0));
  const LinkJudgement j = judge_links(matrix(n, 0.5), n, hosts(n), 0.1, &reference);
  EXPECT_TRUE(j.nodes.empty()) << "no node is to blame when every pair slowed";
  EXPECT_EQ(j.pairs.size(), 15u);
  EXPECT_NEAR(j.pairs.front().reference_ratio, 0.5, 0.03);
}

TEST(Population, NamesTheNodeOfALinkTest) {
  const std::size_t n = 8;
  ResultRun run;
  run.path = "/x/links.h5";
  run.provenance.hosts = hosts(n);
  ResultPoint p;
  p.record.set("suite", std::string("hpcnn-allreduce"));
  p.record.set("exchange", std::string("links"));
  p.record.set("size_bytes", std::int64_t{4 << 20});
  p.record.set("status", std::string("ok"));
  std::vector<double> m = matrix(n, 1.0);
  for (std::size_t b = 0; b < n; ++b)
    if (b != 2) set_pair(m, n, 2, b, 0.46);
  p.arrays.push_back(make_array("link_bw_gbs", {n, n}, m));
  run.points.push_back(p);
  const PopulationReport r = judge_population({run}, 0.1);
  EXPECT_EQ(r.tests, 1u);
  ASSERT_EQ(r.flagged.size(), 1u);
  EXPECT_EQ(r.flagged[0].rfind("n3: 7 of its 7 links at 4 MiB below 90% of the median pair", 0), 0u) << r.flagged[0];
}

// A link test of `names` hosts at 4 MiB in `session` (a path of its own when none).
ResultRun link_run(const std::vector<std::string>& names, const std::vector<double>& m, const std::string& session) {
  ResultRun run;
  run.path = "/x/links-" + session + std::to_string(names.size()) + ".h5";
  run.provenance.hosts = names;
  run.provenance.session = session;
  ResultPoint p;
  p.record.set("suite", std::string("hpcnn-allreduce"));
  p.record.set("exchange", std::string("links"));
  p.record.set("size_bytes", std::int64_t{4 << 20});
  p.record.set("status", std::string("ok"));
  p.arrays.push_back(make_array("link_bw_gbs", {names.size(), names.size()}, m));
  run.points.push_back(p);
  return run;
}

TEST(Population, APairMeasuredAgainInTheNightCountsItsBest) {
  const std::size_t n = 8;
  std::vector<double> m = matrix(n, 2.0);
  set_pair(m, n, 1, 6, 1.2);  // n2-n7 slow while the night's pairs ran
  const ResultRun night = link_run(hosts(n), m, "night");
  const PopulationReport before = judge_population({night}, 0.1);
  ASSERT_EQ(before.flagged.size(), 1u);
  EXPECT_EQ(before.flagged[0].rfind("link n2-n7: 4 MiB at", 0), 0u) << before.flagged[0];

  // Measured again on its two nodes in the same session: at the others' rate, no longer named.
  std::vector<double> again = matrix(2, 2.0);
  const PopulationReport after = judge_population({night, link_run({"n7", "n2"}, again, "night")}, 0.1);
  EXPECT_EQ(after.tests, 1u) << "the pair's second look is a round of the night's test, not a test of its own";
  EXPECT_TRUE(after.flagged.empty()) << after.flagged.front();
  ASSERT_EQ(after.headings.size(), 1u);
  EXPECT_NE(after.headings[0].find("1 pair(s) measured again on their own"), std::string::npos) << after.headings[0];

  // Slow again: still named.
  set_pair(again, 2, 0, 1, 1.1);
  const PopulationReport slow = judge_population({night, link_run({"n2", "n7"}, again, "night")}, 0.1);
  ASSERT_EQ(slow.flagged.size(), 1u);
  EXPECT_EQ(slow.flagged[0].rfind("link n2-n7: 4 MiB at", 0), 0u) << slow.flagged[0];

  // Another night's measurement of the pair is not this night's round.
  const PopulationReport other = judge_population({night, link_run({"n2", "n7"}, matrix(2, 2.0), "other night")}, 0.1);
  ASSERT_EQ(other.flagged.size(), 1u);
  EXPECT_EQ(other.flagged[0].rfind("link n2-n7:", 0), 0u) << other.flagged[0];
}

}  // namespace
