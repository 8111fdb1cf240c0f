// The one table of result fields. Everything else derives from it: Record's type checks, the
// HDF5 attribute types, hpcnn-summary's columns, headers and units.
//
// Adding a field is one line below plus one row in docs/RESULTS.md ("Fields"), which lists every
// field with the same name, type, unit and meaning (tests/test_results.cpp checks that the two
// agree). Adding a field does not change the schema version; renaming, removing or changing the
// type of one does (see docs/RESULTS.md, "Schema version policy").
//
// Formats are printf formats applied to the value as: Int -> long long, Float -> double,
// String -> const char*.
#include <deque>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "results/record.hpp"

namespace hpcnn {

namespace {
constexpr FieldType I = FieldType::Int;
constexpr FieldType F = FieldType::Float;
constexpr FieldType S = FieldType::String;
// Key: a setting that says what was measured (hpcnn-summary --compare matches points on these);
// Setting: how it was measured (iterations, seed, ...); Figure: what was measured.
constexpr FieldRole Key = FieldRole::Key;
constexpr FieldRole Setting = FieldRole::Setting;
constexpr FieldRole Figure = FieldRole::Figure;
}  // namespace

const std::vector<Field>& fields() {
  static const std::vector<Field> table = {
      // name            type unit        format    help, role, the option a setting comes from ("": none)
      {"suite",           S, "",         "%s",     "suite that produced the point (hpcnn-train, hpcnn-infer, ...)", Key, ""},
      {"model",           S, "",         "%s",     "network model (resnet50, ...)", Key, "model"},
      {"backend",         S, "",         "%s",     "compute backend (reference, dnnl, ...)", Key, "backend"},
      {"dataset",         S, "",         "%s",     "input data set (synthetic, ...)", Key, "dataset"},
      {"mode",            S, "",         "%s",     "train | infer", Key, ""},
      {"batch",           I, "",         "%lld",   "mini-batch size per rank (images per iteration)", Key, "batch"},
      {"threads",         I, "",         "%lld",   "threads per rank, as read back from the backend library", Key, "threads"},
      {"ranks",           I, "",         "%lld",   "MPI ranks taking part", Key, ""},
      {"image_size",      I, "px",       "%lld",   "input image height and width", Key, "image-size"},
      {"classes",         I, "",         "%lld",   "output classes of the model", Setting, ""},
      {"params",          I, "",         "%lld",   "trainable parameters of the model (count)", Setting, ""},
      {"iters",           I, "",         "%lld",   "timed iterations (at least --iters; more where --min-time asked for a longer timed total)", Setting, "iters"},
      {"run",             S, "",         "%s",     "the run a row belongs to, as hpcnn-summary reads it: the session its result file was written in (provenance session, HPCNN_SESSION: an acceptance night or blessed run); the rows of a point in one run are its rounds, and --compare and --trend take the best of them", Setting, ""},
      {"min_time_s",      F, "s",        "%.3g",   "--min-time: the timed iterations of the point add up to at least this, or are 100000 (0: exactly --iters)", Setting, "min-time"},
      {"warmup",          I, "",         "%lld",   "untimed warm-up iterations before the timed ones", Setting, "warmup"},
      {"seed",            I, "",         "%lld",   "random seed of weights and synthetic data", Setting, "seed"},
      {"img_per_s",       F, "images/s", "%.1f",   "delivered throughput over all ranks: the images of the timed iterations over their wall time, ranks * batch / iter_mean_s (each iteration the slowest rank's); stalls and slow iterations count", Figure, ""},
      {"img_per_s_median", F, "images/s", "%.1f",  "undisturbed throughput: ranks * batch / iter_median_s (what the iterations no stall hit deliver)", Figure, ""},
      {"iter_median_s",   F, "s",        "%.4g",   "median time of one iteration", Figure, ""},
      {"iter_mean_s",     F, "s",        "%.4g",   "mean time of one iteration", Figure, ""},
      {"iter_std_s",      F, "s",        "%.3g",   "standard deviation of the iteration time", Figure, ""},
      {"iter_min_s",      F, "s",        "%.4g",   "fastest iteration", Figure, ""},
      {"iter_max_s",      F, "s",        "%.4g",   "slowest iteration", Figure, ""},
      {"iter_p5_s",       F, "s",        "%.4g",   "5th percentile of the iteration time", Figure, ""},
      {"iter_p95_s",      F, "s",        "%.4g",   "95th percentile of the iteration time", Figure, ""},
      {"outlier_iters",   I, "",         "%lld",   "timed iterations slower than 3x the median and the median + 10 MADs: stalls (a paused or descheduled rank, a throttled CPU quota, a stray process)", Figure, ""},
      {"stall_share",     F, "",         "%.3f",   "share of the timed time the outlier iterations took beyond the median pace (0.25: stalls cost a quarter of the wall time); the delivered figures include it, the median ones do not", Figure, ""},
      {"load_s",          F, "s",        "%.4g",   "data loading, median per iteration", Figure, ""},
      {"forward_s",       F, "s",        "%.4g",   "forward pass, median per iteration", Figure, ""},
      {"backward_s",      F, "s",        "%.4g",   "backward pass, median per iteration", Figure, ""},
      {"backward_compute_s", F, "s",     "%.4g",   "hpcnn-scale: the backward pass less the exchange's calls during it (bucket starts and progress), median per iteration of the slowest worker: the node's backward compute, what hpcnn-simulate --compute takes", Figure, ""},
      {"update_s",        F, "s",        "%.4g",   "weight update, median per iteration", Figure, ""},
      {"flops_per_image", F, "FLOP",     "%.4g",   "floating-point operations per image (forward, plus backward when training)", Figure, ""},
      {"gflops",          F, "GFLOP/s",  "%.1f",   "delivered rate over all ranks: the timed work over its wall time (flops_per_image * img_per_s / 1e9; SGEMM: 2mnk / the mean call time)", Figure, ""},
      {"gflops_median",   F, "GFLOP/s",  "%.1f",   "undisturbed rate: the same work over the median iteration or call time", Figure, ""},
      {"peak_rss_mib",    F, "MiB",      "%.1f",   "peak resident memory, largest over ranks (getrusage; per rank: array peak_rss_mib)", Figure, ""},
      {"planned_activation_mib", F, "MiB", "%.1f", "activations, gradients and gradient scratch the executor allocates per rank: the memory plan's arena (--memory-plan on), or the sum of the buffers (off); the ops' own workspaces and the weights aside", Figure, ""},
      {"unplanned_activation_mib", F, "MiB", "%.1f", "the same buffers each on its own (what --memory-plan off allocates)", Figure, ""},
      // hpcnn-scale and hpcnn-allreduce
      {"exchange",        S, "",         "%s",     "gradient exchange scheme (hpcnn-scale --list names them)", Key, "exchange"},
      {"exchange_memory", S, "",         "%s",     "where the exchange's buffers are: host | device | host-staged (GPU data copied through host memory)", Key, ""},
      {"placement",       S, "",         "%s",     "hpcnn-allreduce: in (MPI_IN_PLACE: the message summed where it is, its input restored before each call, untimed) | out (a send and a receive buffer, the form of OSU's osu_allreduce)", Key, "placement"},
      {"datatype",        S, "",         "%s",     "hpcnn-allreduce: element type and operation of the message (float32-sum: MPI_FLOAT, MPI_SUM)", Key, ""},
      {"iter_sync",       S, "",         "%s",     "hpcnn-allreduce: what separates the timed calls (barrier: an MPI_Barrier before each, untimed; OSU has one after each)", Setting, ""},
      {"workers",         I, "",         "%lld",   "ranks that train (ranks minus parameter servers)", Key, ""},
      {"ps_servers",      I, "",         "%lld",   "parameter-server ranks (0 for allreduce schemes)", Key, "ps-servers"},
      {"scaling",         S, "",         "%s",     "weak (batch per worker fixed) | strong (global batch fixed)", Key, "scaling"},
      {"global_batch",    I, "",         "%lld",   "images per iteration over all workers", Key, ""},
      {"exchange_precision", S, "",      "%s",     "bf16: the gradients were rounded to bf16 per bucket and summed in bf16, half the bytes (--exchange-precision); absent: fp32", Key, "exchange-precision"},
      {"bucket_mb",       F, "MiB",      "%.3g",   "gradient bucket size (0: one bucket)", Key, "bucket-mb"},
      {"buckets",         I, "",         "%lld",   "gradient buckets per step", Setting, ""},
      {"comm_wait_s",     F, "s",        "%.4g",   "waiting for the exchange after backward, median per iteration (slowest worker)", Figure, ""},
      {"comm_s",          F, "s",        "%.4g",   "one step's exchange run alone, without backward to hide behind (median of 5)", Figure, ""},
      {"comm_exposed_s",  F, "s",        "%.4g",   "wait after backward of the worker whose backward ended last (the step's critical path), median per iteration", Figure, ""},
      {"overlap",         F, "",         "%.3f",   "communication hidden behind backward: (comm_s - comm_exposed_s) / comm_s, in [0, 1]", Figure, ""},
      {"bytes_sent",      I, "B",        "%lld",   "bytes sent per iteration by the busiest rank", Figure, ""},
      {"bytes_received",  I, "B",        "%lld",   "bytes received per iteration by the busiest rank", Figure, ""},
      {"staleness_mean",  F, "",         "%.3g",   "ps-async: mean updates a push missed (shard version now minus version the worker used); row of --table convergence: that epoch's pushes", Figure, ""},
      {"staleness_max",   F, "",         "%.0f",   "ps-async: largest staleness of any push", Figure, ""},
      {"baseline_img_per_s", F, "images/s", "%.1f", "1-rank throughput the efficiency is measured against", Figure, ""},
      {"linear_img_per_s", F, "images/s", "%.1f",  "linear scaling: workers * baseline_img_per_s", Figure, ""},
      {"efficiency",      F, "",         "%.3f",   "img_per_s / linear_img_per_s", Figure, ""},
      {"final_loss",      F, "",         "%.4g",   "training loss of the last iteration (rank 0)", Figure, ""},
      // hpcnn-simulate: where and how a point was simulated
      {"nodes",           I, "",         "%lld",   "hpcnn-simulate: simulated nodes", Key, "nodes"},
      {"ranks_per_node",  I, "",         "%lld",   "hpcnn-simulate: ranks on each simulated node", Key, "ranks-per-node"},
      {"topology",        S, "",         "%s",     "hpcnn-simulate: the simulated network: fat-tree | dragonfly | torus | flat, or file (--platform)", Key, "topology"},
      {"link_gbps",       F, "Gb/s",     "%.4g",   "hpcnn-simulate: link bandwidth per direction (fitted with --fit-link)", Key, "link-gbps"},
      {"link_latency_us", F, "us",       "%.3g",   "hpcnn-simulate: link latency per hop (fitted with --fit-link)", Key, "latency-us"},
      {"link_fit_error",  F, "%",        "%.3g",   "hpcnn-simulate --fit-link: the fitted link's largest relative distance from a measured allreduce size, in percent (the fit's own error, before any simulation)", Setting, ""},
      {"network_model",   S, "",         "%s",     "hpcnn-simulate: ideal (latency + size / bandwidth, max-min sharing) | smpi (SimGrid's SMPI correction factors)", Key, "network-model"},
      {"simulated_platform", S, "",      "%s",     "hpcnn-simulate: the platform simulated (topology, nodes, ranks per node, link), or the --platform file", Setting, ""},
      {"simulated_from",  S, "",         "%s",     "hpcnn-simulate: the measured result file the node's forward, backward and update times come from (--compute)", Setting, ""},
      {"node_add_gbps",   F, "GB/s",     "%.3g",   "the node's rate of summing floats as the exchange does (dst += src over 16 MiB, one thread, best of 5; GB/s of one operand): measured by hpcnn-train, hpcnn-scale and hpcnn-allreduce before their first point; hpcnn-simulate: the rate its simulated node sums at (node_rates_from says whose)", Setting, ""},
      {"node_copy_gbps",  F, "GB/s",     "%.3g",   "the node's rate of copying floats as the exchange does (measured as node_add_gbps); hpcnn-simulate: the simulated node's copy rate, and its memory rate in the backward pass's roofline split", Setting, ""},
      {"node_rates_from", S, "",         "%s",     "hpcnn-simulate: where node_add_gbps and node_copy_gbps come from: options (--add-gbps, --copy-gbps), the --compute or --fit-link file (the measured node's), or this machine (measured at the start)", Setting, ""},
      {"sim_wall_s",      F, "s",        "%.3g",   "hpcnn-simulate: the simulation's own wall time on this machine", Figure, ""},
      {"sim_pss_mib",     F, "MiB",      "%.4g",   "hpcnn-simulate: the simulation's peak memory on this machine (proportional set size: shared buffers once)", Figure, ""},
      {"sim_cpu_clock_interposed", I, "", "%lld",  "hpcnn-simulate: 1 when smpirun ran under hpcnn's CPU-clock interposer (lib/hpcnn/hpcnn-simulate-cpuclock.so, found beside the rank program: SMPI's reading of the thread CPU clock around every MPI call answered with zero, which leaves the figures as they are and takes a third off the wall time), 0 when not", Setting, ""},
      {"analytic_comm_s", F, "s",        "%.4g",   "alpha-beta-gamma estimate of one step's exchange alone (the scheme's textbook cost on the platform's link; compare comm_s)", Figure, ""},
      {"size_bytes",      I, "B",        "%lld",   "allreduce message size", Key, ""},
      {"time_avg_us",     F, "us",       "%.2f",   "allreduce time: mean over iterations, averaged over ranks", Figure, ""},
      {"time_min_us",     F, "us",       "%.2f",   "allreduce time: mean over iterations, fastest rank", Figure, ""},
      {"time_max_us",     F, "us",       "%.2f",   "allreduce time: mean over iterations, slowest rank", Figure, ""},
      {"algbw_gbs",       F, "GB/s",     "%.3f",   "algorithm bandwidth: size_bytes / time_avg_us (1 GB = 1e9 B)", Figure, ""},
      {"busbw_gbs",       F, "GB/s",     "%.3f",   "bus bandwidth: algbw_gbs * 2(ranks-1)/ranks", Figure, ""},
      {"wrong",           I, "",         "%lld",   "result elements that differ from the exact sum (must be 0)", Figure, ""},
      {"link_rounds",     I, "",         "%lld",   "hpcnn-allreduce --links: rounds of pairs run (all P-1, or the --rounds sample)", Setting, ""},
      {"link_order",      S, "",         "%s",     "hpcnn-allreduce --links: how the ranks took the schedule's places: 'ranks' (rank order) or 'seeded' (a permutation drawn from the seed, --randomize)", Setting, ""},
      {"link_pairs",      I, "",         "%lld",   "hpcnn-allreduce --links: pairs of ranks measured", Figure, ""},
      {"link_time_median_us", F, "us",   "%.2f",   "hpcnn-allreduce --links: the median pair's exchange time (its two ranks' median, the slower)", Figure, ""},
      {"link_bw_median_gbs", F, "GB/s",  "%.3f",   "hpcnn-allreduce --links: the median pair's bandwidth, each way (size / exchange time)", Figure, ""},
      {"link_bw_min_gbs", F, "GB/s",     "%.3f",   "hpcnn-allreduce --links: the slowest pair's bandwidth, each way", Figure, ""},
      {"link_bw_min_ratio", F, "",       "%.2f",   "hpcnn-allreduce --links: link_bw_min_gbs / link_bw_median_gbs", Figure, ""},
      {"link_slowest",    S, "",         "%s",     "hpcnn-allreduce --links: the pair of the lowest bandwidth (host names, host/rR where a host holds several ranks)", Figure, ""},
      {"pair",            S, "",         "%s",     "--table links: the pair of ranks of the row (host names)", Figure, ""},
      {"pair_time_us",    F, "us",       "%.2f",   "--table links: the pair's exchange time (the slower of its two ranks' medians)", Figure, ""},
      {"pair_bw_gbs",     F, "GB/s",     "%.3f",   "--table links: the pair's bandwidth, each way", Figure, ""},
      {"pair_ratio",      F, "",         "%.2f",   "--table links: the pair's bandwidth / the median pair's of its point", Figure, ""},
      {"status",          S, "",         "%s",     "ok | failed | diverged | skipped (interrupted points are not written: --resume runs them)", Figure, ""},
      {"status_reason",   S, "",         "%s",     "why the status is not ok; empty when ok", Figure, ""},
      {"reproducer",      S, "",         "%s",     "command line that reruns exactly this point", Setting, ""},
      // results and reporting
      {"repeats",         I, "",         "%lld",   "times the point was run (--repeat); iter_time_s holds repeats x iters iterations per rank", Setting, "repeat"},
      {"img_per_s_rep_min", F, "images/s", "%.1f", "slowest repeat's delivered throughput (each repeat: ranks * batch / its mean iteration time)", Figure, ""},
      {"img_per_s_rep_max", F, "images/s", "%.1f", "fastest repeat's throughput", Figure, ""},
      {"img_per_s_rep_std", F, "images/s", "%.2f", "standard deviation of the repeats' throughputs (0 with one repeat)", Figure, ""},
      {"img_per_s_ci_low", F, "images/s", "%.1f",  "lower end of the 95% confidence interval of the mean repeat throughput (Student t)", Figure, ""},
      {"img_per_s_ci_high", F, "images/s", "%.1f", "upper end of the 95% confidence interval of the mean repeat throughput", Figure, ""},
      {"other_s",         F, "s",        "%.4g",   "iteration time outside the phases (bookkeeping), median per iteration", Figure, ""},
      {"phase_gap_max",   F, "",         "%.3g",   "largest |iteration - sum of phases| / iteration over all iterations and ranks", Figure, ""},
      {"phase_gap_iters", I, "",         "%lld",   "timed iterations (over all ranks) whose phases miss the iteration time by more than 2%", Figure, ""},
      {"phase_check",     S, "",         "%s",     "ok when at most 1% of the timed iterations (and at least one) miss by more than 2% (phase_gap_iters), else failed", Figure, ""},
      {"profile",         S, "",         "%s",     "none | ops (--profile)", Key, "profile"},
      {"profile_iter_median_s", F, "s",  "%.4g",   "median iteration time of the profiled pass (--profile ops)", Figure, ""},
      {"profile_overhead", F, "",        "%.3g",   "profiled / unprofiled median iteration time - 1", Figure, ""},
      {"op_kinds",        S, "",         "%s",     "comma-separated operator kinds naming the columns of the op_* arrays", Setting, ""},
      {"op",              S, "",         "%s",     "operator kind (row of --table ops; from op_kinds)", Figure, ""},
      {"op_time_s",       F, "s",        "%.4g",   "time per iteration in this operator kind, mean over ranks (row of --table ops)", Figure, ""},
      {"op_share",        F, "%",        "%.1f",   "share of the sum over all operator kinds (row of --table ops)", Figure, ""},
      {"op_calls",        I, "",         "%lld",   "calls per iteration (row of --table ops)", Figure, ""},
      {"op_flops",        F, "FLOP",     "%.4g",   "floating-point operations per call (row of --table ops)", Figure, ""},
      {"op_bytes",        F, "B",        "%.4g",   "bytes read and written per call, minimum traffic (row of --table ops)", Figure, ""},
      {"op_gflops",       F, "GFLOP/s",  "%.2f",   "op_flops * op_calls / op_time_s / 1e9 (row of --table ops)", Figure, ""},
      {"cpu_user_pct",    F, "%",        "%.1f",   "node CPU time in user mode (user + nice) over the timed iterations, % of all cores (/proc/stat), rank 0's node", Figure, ""},
      {"cpu_sys_pct",     F, "%",        "%.1f",   "node CPU time in kernel mode (system + irq + softirq), % of all cores", Figure, ""},
      {"cpu_iowait_pct",  F, "%",        "%.1f",   "node CPU time waiting for I/O, % of all cores", Figure, ""},
      {"cpu_total_pct",   F, "%",        "%.1f",   "node CPU time busy (all but idle and iowait), % of all cores", Figure, ""},
      {"mem_avg_mib",     F, "MiB",      "%.1f",   "resident memory averaged over samples every 20 ms during the timed iterations, rank 0", Figure, ""},
      {"mem_max_mib",     F, "MiB",      "%.1f",   "largest resident memory sample during the timed iterations, rank 0", Figure, ""},
      // real data and accuracy
      {"data_dir",        S, "",         "%s",     "directory the real data set was read from (--data)", Setting, ""},
      {"data_fs",         S, "",         "%s",     "file system type of the --data folder in rank 0's mount table: local (ext4, xfs), network (nfs4, lustre, gpfs, fuse.sshfs) or memory (tmpfs)", Setting, ""},
      {"data_format",     S, "",         "%s",     "idx | cifar10-bin | cifar100-bin", Setting, ""},
      {"train_size",      I, "",         "%lld",   "training images used per epoch, all ranks together", Setting, ""},
      {"test_size",       I, "",         "%lld",   "test images evaluated", Setting, ""},
      {"preset",          S, "",         "%s",     "--preset the settings came from (the framework defaults of ref. [5], docs/EXPERIMENTS.md); empty when none", Setting, "preset"},
      {"act",             S, "",         "%s",     "activation of lenet5: relu | tanh (--act; the other models use ReLU)", Key, "act"},
      {"optimizer",       S, "",         "%s",     "sgd | adam", Key, "optimizer"},
      {"lr",              F, "",         "%.4g",   "base learning rate", Key, "lr"},
      {"momentum",        F, "",         "%.3g",   "SGD momentum", Setting, "momentum"},
      {"weight_decay",    F, "",         "%.3g",   "L2 weight decay", Setting, "weight-decay"},
      {"lr_schedule",     S, "",         "%s",     "constant | step (x0.1 every lr_step epochs) | cosine (per step)", Setting, "lr-schedule"},
      {"lr_step",         I, "",         "%lld",   "epochs between x0.1 steps of lr_schedule step", Setting, "lr-step"},
      {"epochs",          I, "",         "%lld",   "epochs asked for", Setting, "epochs"},
      {"epochs_done",     I, "",         "%lld",   "epochs completed (fewer than epochs when the point diverged)", Figure, ""},
      {"epoch",           I, "",         "%lld",   "epoch number, from 1 (row of --table accuracy)", Key, ""},
      {"steps",           I, "",         "%lld",   "optimizer steps taken", Figure, ""},
      {"diverged_step",   I, "",         "%lld",   "optimizer step (from 1) whose loss was NaN or Inf; -1 when the point did not diverge", Figure, ""},
      {"augment",         I, "",         "%lld",   "1: random crop (padding 4) and horizontal flip of training images", Setting, "augment"},
      {"cache",           I, "",         "%lld",   "1: decoded samples kept in memory after their first use", Setting, "cache"},
      {"prefetch",        I, "",         "%lld",   "batches decoded ahead by the background loader thread (0: none)", Setting, "prefetch"},
      {"test_batch",      I, "",         "%lld",   "images per evaluation batch", Setting, "test-batch"},
      {"checkpoint_every", I, "",        "%lld",   "epochs (or steps: checkpoint_unit) between training checkpoints (--checkpoint-every; 0: none)", Setting, "checkpoint-every"},
      {"checkpoint_unit", S, "",         "%s",     "what checkpoint_every counts: epoch or step (--checkpoint-unit)", Setting, "checkpoint-unit"},
      {"resumed_epochs",  I, "",         "%lld",   "whole epochs this point restored from its checkpoint (--resume; 0: it ran from the start, or resumed within its first epoch)", Figure, ""},
      {"resumed_steps",   I, "",         "%lld",   "optimizer steps this point restored from its checkpoint (--resume; 0: it ran from the start)", Figure, ""},
      {"params_digest",   S, "",         "%s",     "FNV-1a 64-bit hash of the final parameters (float bytes, rank 0): equal digests, equal weights", Figure, ""},
      {"test_eval",       S, "",         "%s",     "inference: a Mode::Infer network with the trained parameters and buffers (batch norm: running statistics, as PyTorch's eval()); batch-stats in files before buffers existed", Setting, ""},
      {"train_loss",      F, "",         "%.4f",   "mean training loss over the (last) epoch's batches", Figure, ""},
      {"train_acc",       F, "%",        "%.2f",   "training accuracy over the (last) epoch, measured during training", Figure, ""},
      {"test_loss",       F, "",         "%.4f",   "mean loss on the test set after the (last) epoch; NaN when diverged", Figure, ""},
      {"test_acc",        F, "%",        "%.2f",   "test accuracy after the (last) epoch; NaN when diverged", Figure, ""},
      {"int8_test_acc",   F, "%",        "%.2f",   "top-1 accuracy on the test set of the trained model in int8 (--eval-int8: dnnl post-training quantization, calibrated on training batches)", Figure, ""},
      {"int8_test_loss",  F, "",         "%.4f",   "mean test loss of the trained model in int8 (--eval-int8)", Figure, ""},
      {"int8_test_s",     F, "s",        "%.3f",   "seconds of the int8 test-set evaluation, calibration excluded (--eval-int8)", Figure, ""},
      {"epoch_s",         F, "s",        "%.4g",   "training time of an epoch (a point: median over epochs; row: that epoch), slowest rank", Figure, ""},
      {"test_s",          F, "s",        "%.4g",   "time of one test-set evaluation (a point: the last one; row: that epoch's)", Figure, ""},
      {"train_time_s",    F, "s",        "%.4g",   "training time of all epochs, evaluations excluded (row of --table convergence: up to the end of that epoch)", Figure, ""},
      {"load_wait_s",     F, "s",        "%.4g",   "time the training loop waited for batches, all epochs (each epoch's slowest rank)", Figure, ""},
      {"data_load_s",     F, "s",        "%.4g",   "time to read, decompress and validate the data set files (once per run)", Figure, ""},
      // hpcnn-scale --data
      {"sharding",        S, "",         "%s",     "hpcnn-scale --data: shard (disjoint shards of a shared per-epoch permutation) | whole (each worker its own permutation of the whole set, 1/workers of it per epoch)", Key, "sharding"},
      {"steps_per_epoch", I, "",         "%lld",   "hpcnn-scale --data: optimizer steps of every worker per epoch, floor(train_size / (batch x workers))", Figure, ""},
      {"dropped_per_epoch", I, "",       "%lld",   "hpcnn-scale --data: training images no worker takes in an epoch (train_size mod batch x workers; others each epoch when shuffled)", Figure, ""},
      {"file_reads",      I, "",         "%lld",   "hpcnn-scale --data without --cache: training samples read from the data files (one pread each), all workers and epochs", Figure, ""},
      {"file_read_bytes", I, "B",        "%lld",   "bytes of those reads", Figure, ""},
      {"samples_from",    S, "",         "%s",     "hpcnn-scale --data: where training samples were read from: cache (--cache), files (the data files, one pread each), decompressed copies (gzip files decompressed by each worker once per point into $TMPDIR, then one pread each)", Setting, ""},
      {"storage",         S, "",         "%s",     "hpcnn-scale --data: warm (the files as the page cache holds them) | cold (their pages dropped from the page cache before every epoch: every read goes to the storage)", Key, "storage"},
      {"page_cache_resident", F, "",     "%.3f",   "hpcnn-scale --data without --cache: the largest share of the files samples are read from that the page cache held before an epoch's first read (after the drop, cold), over workers and epochs", Figure, ""},
      {"load_work_s",     F, "s",        "%.4g",   "hpcnn-scale --data: mean time to read (without --cache) and decode one batch, slowest worker, over the steps since the start or a restart, whether the step waited for it (prefetch 0: load_s) or the loader's thread did it meanwhile (load_s is then only the wait)", Figure, ""},
      {"data_set_mib",    F, "MiB",      "%.1f",   "hpcnn-scale --data: the decoded data set (training and test images and labels) one worker holds in memory, largest over workers", Figure, ""},
      {"data_cache_mib",  F, "MiB",      "%.1f",   "hpcnn-scale --data: the loaders' caches of decoded float samples one worker holds (--cache: the training and test sets; 0 without), largest over workers", Figure, ""},
      {"page_drop_s",     F, "s",        "%.4g",   "--storage cold: time to drop the files' pages before the epochs, slowest worker (not in any training time)", Figure, ""},
      {"decompressed_files", I, "",      "%lld",   "hpcnn-scale --data, samples_from decompressed copies: gzip files each worker decompressed before training", Figure, ""},
      {"decompressed_bytes", I, "B",     "%lld",   "bytes of one worker's decompressed copies (in $TMPDIR while it trains, unnamed: freed however the process ends)", Figure, ""},
      {"decompress_s",    F, "s",        "%.4g",   "time to decompress the copies, slowest worker, once before training (not in load_time_s, epoch_s or train_time_s)", Figure, ""},
      {"target_accuracy", F, "%",        "%.2f",   "--target-accuracy: the test accuracy the time to accuracy is measured to", Setting, "target-accuracy"},
      {"time_to_accuracy_s", F, "s",     "%.4g",   "training time (slowest worker's epochs, evaluations excluded) until the test accuracy first reached target_accuracy; NaN when it never did", Figure, ""},
      {"epochs_to_accuracy", I, "",      "%lld",   "epochs until the test accuracy first reached target_accuracy (absent when it never did)", Figure, ""},
      {"target_status",   S, "",         "%s",     "reached, or 'not reached in N epochs (best A %)'", Figure, ""},
      // hpcnn-blas
      {"sweep",           S, "",         "%s",     "hpcnn-blas sweep: gemm | layers | model | noise", Key, "sweep"},
      {"size",            S, "",         "%s",     "GEMM shape MxNxK (C[M][N] += A[M][K] B[K][N]): the call timed (gemm), or the layer's forward GEMM as the GEMM-lowered backends run it (row of --table blas); fwq: the fixed work quantum of --sweep noise", Key, ""},
      {"threads_setting", S, "",         "%s",     "threads as asked for: a number, or default (the library's own choice, ref. [5]'s 'unset')", Setting, ""},
      {"sec_per_iter",    F, "s",        "%.4g",   "mean time of one repetition (the timed total over the count): one SGEMM call (gemm), forward + backward of the layers (layers), one training iteration (model)", Figure, ""},
      {"forward_gflops",  F, "GFLOP/s",  "%.1f",   "forward rate of a layer shape (row of --table blas, sweep layers)", Figure, ""},
      {"backward_gflops", F, "GFLOP/s",  "%.1f",   "backward rate (weights, plus data unless the layer reads the network input) of a layer shape", Figure, ""},
      {"layer",           S, "",         "%s",     "layers of one shape, joined by +; in a layers point all shapes, comma-separated", Figure, ""},
      {"layer_shapes",    S, "",         "%s",     "forward GEMM shape of every distinct conv/fc layer, comma-separated: the columns of the layer_* arrays", Setting, ""},
      {"layer_count",     I, "",         "%lld",   "layers of this shape in the model (row of --table blas, sweep layers)", Figure, ""},
      {"peak_gflops",     F, "GFLOP/s",  "%.1f",   "measured peak of the point's precision with min(threads, CPUs) threads (model points: times the ranks): FP32 FMAs, BF16 dot products (bf16), int8 dot products in GOP/s (int8, AVX512_VNNI) (suites/compute_peak.hpp)", Figure, ""},
      {"peak_fraction",   F, "",         "%.3f",   "gflops / peak_gflops", Figure, ""},
      {"gemm_check_error", F, "",        "%.3g",   "largest |c - ref| / sum|a b| over 64 sampled SGEMM entries (double reference); above 2 k 2^-24 fails the point", Figure, ""},
      // GPU points
      {"precision",       S, "",         "%s",     "arithmetic: fp32 | tf32 (tensor-core TF32 in conv/gemm) | bf16 (GPU: BF16 activations and math; CPU: BF16 inputs of conv, inner product and GEMM with FP32 accumulation; FP32 master weights) | int8 (CPU inference: u8/s8 inputs of conv and inner product with calibrated scales, s8 weights per output channel, int32 accumulation)", Key, "precision"},
      {"calibration_batches", I, "",     "%lld",   "int8: batches of the calibration pass whose layer-input ranges gave the activation scales (--calibration-batches)", Setting, "calibration-batches"},
      {"precision_exceptions", S, "",    "%s",     "layers that did not compute in the point's precision, and why (int8: layers without an optimized oneDNN int8 kernel ran in fp32); absent: none", Figure, ""},
      {"cudnn_benchmark", I, "",         "%lld",   "1: cuDNN algorithms chosen by timing them (--cudnn-benchmark); 0: cuDNN's heuristics", Key, "cudnn-benchmark"},
      {"fusion",          S, "",         "%s",     "on: ReLUs fused into the op before them, inference batch norms folded into their conv, where the backend can (--fusion); off: every layer its own operator", Key, "fusion"},
      {"memory_plan",     S, "",         "%s",     "on: activations and gradients share an arena by liveness (--memory-plan); off: a buffer each (a Setting, not a Key: a reference blessed before the plan still matches; the memory figures show it)", Setting, "memory-plan"},
      {"layout",          S, "",         "%s",     "activation layout asked for: auto | nchw | nhwc (GPU backends; the one used is in provenance cuda_layout)", Key, "layout"},
      {"conv_algorithm",  S, "",         "%s",     "dnnl convolutions: auto (Winograd for fp32 3x3 stride-1 where oneDNN picks it) | direct (--conv-algorithm; a Setting: references blessed without it still match)", Setting, "conv-algorithm"},
      {"gemm_columns",    I, "",         "%lld",   "openblas/eigen: the im2col GEMM's column target (--gemm-columns; 0: the built-in 1024)", Setting, "gemm-columns"},
      {"cudnn_api",       S, "",         "%s",     "cuda convolutions: graph | legacy (--cudnn-api)", Setting, "cudnn-api"},
      {"cudnn_bn_activation", S, "",     "%s",     "cuda: on: a batch norm's ReLU inside cuDNN's batch norm where supported; off: hpcnn's kernels (--cudnn-bn-activation)", Setting, "cudnn-bn-activation"},
      {"gpu_peak_mib",    F, "MiB",      "%.1f",   "peak device memory of the backend's allocator (activations, weights, workspace), largest over ranks", Figure, ""},
      {"gpu_used_mib",    F, "MiB",      "%.1f",   "device memory in use on the whole GPU at the end of the timed iterations (cudaMemGetInfo), largest over ranks", Figure, ""},
      {"gpu_energy_j",    F, "J",        "%.1f",   "GPU energy over the timed iterations (NVML), summed over ranks; absent without NVML", Figure, ""},
      {"joules_per_image", F, "J",       "%.4g",   "gpu_energy_j / images processed in the timed iterations", Figure, ""},
      {"gpu_power_w",     F, "W",        "%.1f",   "mean GPU power over the timed iterations, summed over ranks", Figure, ""},
  };
  return table;
}

const Field* find_field(const std::string& name) {
  for (const Field& f : fields())
    if (name == f.name) return &f;
  return nullptr;
}

const Field* field_of_option(std::string_view option) {
  for (const Field& f : fields())
    if (*f.option && option == f.option) return &f;
  return nullptr;
}

std::vector<std::string> key_fields() {
  std::vector<std::string> keys;
  for (const Field& f : fields())
    if (f.role == FieldRole::Key) keys.emplace_back(f.name);
  return keys;
}

namespace {

// The histogram arrays of every bounded series (results/bounded_series.hpp), declared after the
// series themselves; their names live as long as the table.
std::vector<ArrayField> with_histograms(std::vector<ArrayField> table) {
  static std::deque<std::string> text;
  const std::size_t declared = table.size();
  for (std::size_t i = 0; i < declared; ++i) {
    if (!table[i].bounded) continue;
    const std::string series = table[i].name, unit = table[i].unit;
    const std::string arrays[][3] = {
        {series + "_bucket", unit, "histogram of " + series + " (more than 10,000 values per rank): every occupied bucket's lower and upper edge, [buckets][2]"},
        {series + "_count", "", "histogram of " + series + ": each rank's values in every bucket, [ranks][buckets]"},
        {series + "_slowest_count", "", "histogram of " + series + ": the slowest rank of every iteration in every bucket, [buckets]"},
        {series + "_sum", unit, "histogram of " + series + ": the exact sum of each rank's values, [ranks]"},
        {series + "_slowest_sum", unit, "histogram of " + series + ": the exact sum of the slowest rank's value of every iteration, [1]"}};
    for (const auto& [name, u, help] : arrays) {
      const char* n = text.emplace_back(name).c_str();
      const char* un = text.emplace_back(u).c_str();
      table.push_back({n, un, text.emplace_back(help).c_str()});
    }
  }
  return table;
}

}  // namespace

const std::vector<ArrayField>& array_fields() {
  constexpr bool Bounded = true;  // stored as a histogram beyond 10,000 values per rank
  static const std::vector<ArrayField> table = with_histograms({
      // name                   unit        help
      {"iter_time_s",           "s",        "time of every timed iteration (allreduce: of every timed call), [ranks][n]", Bounded},
      {"warmup_time_s",         "s",        "time of every warm-up iteration, [ranks][warmup x repeats]", Bounded},
      {"load_time_s",           "s",        "load phase of every timed iteration, [ranks][n]", Bounded},
      {"forward_time_s",        "s",        "forward phase, [ranks][n]", Bounded},
      {"backward_time_s",       "s",        "backward phase, [ranks][n]", Bounded},
      {"exchange_in_backward_time_s", "s",  "hpcnn-scale: the part of each backward phase spent in the exchange's calls (bucket starts and progress, with their sums), [workers][n]", Bounded},
      {"comm_wait_time_s",      "s",        "communication wait after backward, [ranks][n]", Bounded},
      {"update_time_s",         "s",        "weight update phase, [ranks][n]", Bounded},
      {"rss_mib",               "MiB",      "resident memory after every timed iteration, [ranks][n]", Bounded},
      {"peak_rss_mib",          "MiB",      "peak resident memory of every rank, [ranks][1]"},
      {"profile_iter_time_s",   "s",        "iterations of the profiled pass, [ranks][iters]", Bounded},
      {"op_time_s",             "s",        "time per iteration in each operator kind, [ranks][kinds]"},
      {"op_calls",              "",         "calls per iteration of each operator kind, [kinds]"},
      {"op_flops",              "FLOP",     "floating-point operations per call of each operator kind, [kinds]"},
      {"op_bytes",              "B",        "bytes read and written per call of each operator kind, [kinds]"},
      {"repeat_img_per_s",      "images/s", "delivered throughput of every repeat, [repeats]"},
      {"bytes_sent_per_rank",   "B",        "bytes sent per iteration by every rank, [ranks]"},
      {"bytes_received_per_rank", "B",      "bytes received per iteration by every rank, [ranks]"},
      {"staleness",             "",         "ps-async: staleness of every push, [pushes]"},
      {"epoch_train_loss",      "",         "training loss of every epoch, [epochs]"},
      {"epoch_train_acc",       "%",        "training accuracy of every epoch, [epochs]"},
      {"epoch_test_loss",       "",         "test loss after every epoch, [epochs]"},
      {"epoch_test_acc",        "%",        "test accuracy after every epoch, [epochs]"},
      {"epoch_time_s",          "s",        "training time of every epoch, slowest rank, [epochs]"},
      {"epoch_test_time_s",     "s",        "test-set evaluation time after every epoch, [epochs]"},
      {"epoch_load_wait_s",     "s",        "time waited for batches in every epoch, slowest rank, [epochs]"},
      {"epoch_load_s",          "s",        "hpcnn-scale --data: load time (file reads + decode, or cache) of every epoch, slowest worker, [epochs]"},
      {"epoch_wall_s",          "s",        "hpcnn-scale --data: training time at the end of every epoch (sum of epoch_time_s), [epochs]"},
      {"step_loss",             "",         "global mean training loss of every optimizer step, [steps]"},
      {"eval_step",             "",         "--eval-every: the optimizer step of every evaluation, [evaluations]"},
      {"eval_test_loss",        "",         "--eval-every: test loss of every evaluation, [evaluations]"},
      {"eval_test_acc",         "%",        "--eval-every: test accuracy of every evaluation, [evaluations]"},
      {"link_time_us",          "us",       "hpcnn-allreduce --links: every pair's exchange time, [ranks][ranks] (0: not measured)"},
      {"link_bw_gbs",           "GB/s",     "hpcnn-allreduce --links: every pair's bandwidth each way, [ranks][ranks] (0: not measured)"},
      {"call_time_s",           "s",        "hpcnn-blas gemm: every timed SGEMM call, [calls]", Bounded},
      {"quantum_time_s",        "s",        "hpcnn-blas noise: every timed work quantum, per quantum the slowest thread of each rank, [ranks][quanta]", Bounded},
      {"layer_forward_s",       "s",        "hpcnn-blas layers: forward time of every distinct layer shape, [shapes]"},
      {"layer_backward_s",      "s",        "hpcnn-blas layers: backward time of every distinct layer shape, [shapes]"},
      {"layer_forward_gflops",  "GFLOP/s",  "hpcnn-blas layers: forward rate of every distinct layer shape, [shapes]"},
      {"layer_backward_gflops", "GFLOP/s",  "hpcnn-blas layers: backward rate of every distinct layer shape, [shapes]"},
      {"layer_count",           "",         "hpcnn-blas layers: layers of every distinct shape in the model, [shapes]"},
  });
  return table;
}

Array make_array(const std::string& name, std::vector<std::size_t> dims, std::vector<double> data) {
  for (const ArrayField& a : array_fields())
    if (name == a.name) return Array{name, a.unit, std::move(dims), std::move(data)};
  throw std::logic_error("array '" + name + "' is not in array_fields() (src/results/fields.cpp)");
}

}  // namespace hpcnn
