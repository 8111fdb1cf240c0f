// The presets of hpcnn-summary --table. One entry per table; keep the list short and each entry
// one line where possible (several engineers add tables here: append, don't reorder).
#include "analysis/table_presets.hpp"

#include "analysis/link_matrix.hpp"

#include <string>
#include <variant>

namespace hpcnn {

namespace {

// --- row expanders (a preset whose points become several rows) -------------------------------

// accuracy: one row per epoch of a real-data point, from its epoch_* arrays; points
// without them (synthetic-data runs) give no rows.
// ps-async on real data (hpcnn-scale --data): the mean staleness of each epoch's pushes, next to
// that epoch's accuracy. Every server records every push in the order it applied them, and the
// workers meet at each epoch's end, so each server's series falls into `epochs` runs of
// steps_per_epoch x workers pushes. Empty when the array does not have that shape (a point resumed
// from a checkpoint, a synchronous scheme): the row keeps the point's staleness_mean then.
std::vector<double> epoch_staleness(const ResultPoint& point, std::size_t epochs) {
  const Array* pushes = nullptr;
  for (const Array& a : point.arrays)
    if (a.name == "staleness") pushes = &a;
  const auto steps = point.record.number("steps_per_epoch"), workers = point.record.number("workers");
  if (!pushes || !steps || !workers || epochs == 0) return {};
  const std::size_t per_epoch = static_cast<std::size_t>(*steps * *workers), n = pushes->data.size();
  if (per_epoch == 0 || n % (per_epoch * epochs) != 0) return {};
  std::vector<double> mean(epochs, 0.0);
  for (std::size_t k = 0; k < n; ++k) mean[(k / per_epoch) % epochs] += pushes->data[k];
  const double count = static_cast<double>(n / epochs);
  for (double& m : mean) m /= count;
  return mean;
}

std::vector<Record> accuracy_rows(const ResultRun&, const ResultPoint& point) {
  const std::pair<const char*, const char*> columns[] = {
      {"epoch_train_loss", "train_loss"}, {"epoch_train_acc", "train_acc"}, {"epoch_test_loss", "test_loss"},
      {"epoch_test_acc", "test_acc"},     {"epoch_time_s", "epoch_s"},      {"epoch_test_time_s", "test_s"},
      {"epoch_wall_s", "train_time_s"}};  // hpcnn-scale --data: training time up to that epoch's end
  std::vector<const Array*> arrays;
  for (const auto& [array, field] : columns) {
    const Array* found = nullptr;
    for (const Array& a : point.arrays)
      if (a.name == array) found = &a;
    arrays.push_back(found);
  }
  if (!arrays[0]) return {};
  const std::vector<double> staleness = epoch_staleness(point, arrays[0]->data.size());
  std::vector<Record> rows;
  for (std::size_t e = 0; e < arrays[0]->data.size(); ++e) {
    Record r = point.record;
    r.set("epoch", static_cast<std::int64_t>(e + 1));
    for (std::size_t c = 0; c < arrays.size(); ++c)
      if (arrays[c] && e < arrays[c]->data.size()) r.set(columns[c].second, arrays[c]->data[e]);
    if (!staleness.empty()) r.set("staleness_mean", staleness[e]);
    rows.push_back(std::move(r));
  }
  return rows;
}

// blas: hpcnn-blas points as they are, except a --sweep layers point, which becomes one
// row per distinct layer shape from its layer_* arrays (columns named by layer_shapes / layer).
std::vector<Record> blas_rows(const ResultRun&, const ResultPoint& point) {
  const Value* sweep = point.record.get("sweep");
  if (!sweep) return {};  // not an hpcnn-blas point
  if (std::get<std::string>(*sweep) != "layers") return {point.record};
  const auto split = [](const std::string& text) {
    std::vector<std::string> out(1);
    for (char ch : text) {
      if (ch == ',') out.emplace_back();
      else out.back() += ch;
    }
    return out;
  };
  const std::vector<std::string> shapes = split(point.record.text("layer_shapes")), names = split(point.record.text("layer"));
  const auto array = [&point](const char* name) -> const std::vector<double>* {
    for (const Array& a : point.arrays)
      if (a.name == name) return &a.data;
    return nullptr;
  };
  const auto *fs = array("layer_forward_s"), *bs = array("layer_backward_s"), *fg = array("layer_forward_gflops"),
             *bg = array("layer_backward_gflops"), *n = array("layer_count");
  if (!fs || !bs || !fg || !bg || !n) return {point.record};
  std::vector<Record> rows;
  for (std::size_t i = 0; i < fs->size() && i < shapes.size() && i < bs->size() && i < fg->size() &&
                          i < bg->size() && i < n->size(); ++i) {
    Record r = point.record;
    r.set("size", shapes[i]);
    if (i < names.size()) r.set("layer", names[i]);
    r.set("layer_count", static_cast<std::int64_t>((*n)[i]));
    r.set("forward_s", (*fs)[i]);
    r.set("backward_s", (*bs)[i]);
    r.set("sec_per_iter", (*fs)[i] + (*bs)[i]);
    r.set("forward_gflops", (*fg)[i]);
    r.set("backward_gflops", (*bg)[i]);
    const double t = (*fs)[i] + (*bs)[i];  // combined rate from the two rates' FLOPs
    r.set("gflops", t > 0 ? ((*fg)[i] * (*fs)[i] + (*bg)[i] * (*bs)[i]) / t : 0.0);
    rows.push_back(std::move(r));
  }
  return rows;
}

// ops: one row per operator kind of a --profile ops point, from op_kinds and the op_*
// arrays; points without a profile give no rows.
std::vector<Record> ops_rows(const ResultRun&, const ResultPoint& point) {
  const std::string kinds_text = point.record.text("op_kinds");
  if (kinds_text.empty()) return {};
  std::vector<std::string> kinds(1);
  for (char ch : kinds_text) {
    if (ch == ',') kinds.emplace_back();
    else kinds.back() += ch;
  }
  const auto array = [&point](const char* name) -> const Array* {
    for (const Array& a : point.arrays)
      if (a.name == name) return &a;
    return nullptr;
  };
  const Array *time = array("op_time_s"), *calls = array("op_calls"), *flops = array("op_flops"), *bytes = array("op_bytes");
  const std::size_t n = kinds.size();
  if (!time || time->dims.size() != 2 || time->dims[1] != n || time->data.size() != time->dims[0] * n) return {};
  std::vector<double> mean(n, 0.0);  // seconds per iteration, mean over ranks
  for (std::size_t r = 0; r < time->dims[0]; ++r)
    for (std::size_t k = 0; k < n; ++k) mean[k] += time->data[r * n + k] / static_cast<double>(time->dims[0]);
  double sum = 0;
  for (double v : mean) sum += v;
  std::vector<Record> rows;
  for (std::size_t k = 0; k < n; ++k) {
    Record r = point.record;
    r.set("op", kinds[k]);
    r.set("op_time_s", mean[k]);
    r.set("op_share", sum > 0 ? 100.0 * mean[k] / sum : 0.0);
    const bool per_kind = calls && calls->data.size() == n;
    if (per_kind) r.set("op_calls", static_cast<std::int64_t>(calls->data[k] + 0.5));
    if (flops && flops->data.size() == n) r.set("op_flops", flops->data[k]);
    if (bytes && bytes->data.size() == n) r.set("op_bytes", bytes->data[k]);
    if (per_kind && flops && flops->data.size() == n && mean[k] > 0)
      r.set("op_gflops", flops->data[k] * calls->data[k] / mean[k] * 1e-9);
    rows.push_back(std::move(r));
  }
  return rows;
}

// links: one row per measured pair of an hpcnn-allreduce --links point, from its link_* arrays and
// the run's hosts; points without them (allreduce points) give no rows.
std::vector<Record> link_rows(const ResultRun& run, const ResultPoint& point) {
  const Array *bw = nullptr, *time = nullptr;
  for (const Array& a : point.arrays)
    if (a.name == "link_bw_gbs") bw = &a;
    else if (a.name == "link_time_us") time = &a;
  if (!bw || bw->dims.size() != 2 || bw->dims[0] != bw->dims[1] || bw->data.size() != bw->dims[0] * bw->dims[1]) return {};
  const std::size_t n = bw->dims[0];
  const std::vector<std::string> names = rank_names(run.provenance.hosts);
  const double median = summarize_links(bw->data, {}, names).bw_median_gbs;
  std::vector<Record> rows;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b) {
      const double v = bw->data[a * n + b];
      if (!(v > 0)) continue;
      Record r = point.record;
      r.set("pair", pair_name(names, a, b));
      r.set("pair_bw_gbs", v);
      if (time && time->data.size() == n * n) r.set("pair_time_us", time->data[a * n + b]);
      if (median > 0) r.set("pair_ratio", v / median);
      rows.push_back(std::move(r));
    }
  return rows;
}

}  // namespace

const std::vector<TablePreset>& table_presets() {
  static const std::vector<TablePreset> table = {
      // name          default columns                                          help  rows  plot
      {"throughput", "suite,model,backend,dataset,batch,threads,ranks,img_per_s",
       "images per second per point (E1, E3: ref. [1] Figs 3-4)", nullptr, plot_throughput},
      {"accuracy", "model,backend,dataset,batch,lr,optimizer,epochs,seed,epoch,train_loss,train_acc,test_loss,test_acc,epoch_s,test_s,status",
       "one row per epoch of real-data training: loss, accuracy (%), epoch and test time (E7, E12: ref. [1] Fig 8, ref. [5] Tables XV-XXI)",
       accuracy_rows, plot_accuracy},
      {"blas", "sweep,backend,threads,size,gflops,sec_per_iter,cpu_user_pct,cpu_sys_pct,cpu_iowait_pct,mem_avg_mib,mem_max_mib",
       "hpcnn-blas: SGEMM, layer and training rates per library and thread count, CPU and memory use (E10, E11: ref. [5] Tables X-XII)",
       blas_rows, nullptr},
      // results and reporting
      {"breakdown", "suite,model,backend,batch,ranks,load_s,forward_s,backward_s,comm_wait_s,update_s,other_s,iter_median_s,phase_check",
       "median time of each phase of an iteration, and the phase-sum check (E8: ref. [4] Figs 4-9)", nullptr, plot_breakdown},
      {"ops", "model,backend,batch,op,op_calls,op_time_s,op_share,op_flops,op_bytes,op_gflops",
       "time per operator kind per iteration from --profile ops (E9: ref. [4] Figs 5, 7, 10)", ops_rows, plot_ops},
      {"memory", "suite,model,backend,batch,ranks,memory_plan,peak_rss_mib,planned_activation_mib,mem_avg_mib,mem_max_mib",
       "resident memory per point: peak (getrusage), the executor's planned activations and gradients, sampled average and maximum (E2: ref. [1] Fig 2)", nullptr, nullptr},
      {"cpu", "suite,model,backend,batch,threads,cpu_user_pct,cpu_sys_pct,cpu_iowait_pct,cpu_total_pct,img_per_s",
       "CPU use over the timed iterations against throughput (E13: ref. [5] Table XXII)", nullptr, nullptr},
      // distributed points: hpcnn-allreduce's nccl-tests-like table, hpcnn-scale's
      // efficiency against linear scaling (ref. [1] Figs 5-7; --plot draws the linear line)
      {"allreduce", "exchange,ranks,size_bytes,time_avg_us,time_min_us,time_max_us,algbw_gbs,busbw_gbs,wrong,exchange_memory,placement,status",
       "hpcnn-allreduce: time per call and algorithm/bus bandwidth per scheme, rank count and size, with the elements found wrong",
       nullptr, plot_allreduce},
      {"links", "ranks,size_bytes,pair,pair_time_us,pair_bw_gbs,pair_ratio,status",
       "hpcnn-allreduce --links: one row per pair of ranks, its exchange time and bandwidth each way against the median pair",
       link_rows, nullptr},
      {"scaling", "model,backend,exchange,scaling,ranks,workers,batch,global_batch,img_per_s,linear_img_per_s,efficiency,comm_wait_s,overlap,status",
       "hpcnn-scale: aggregate images/s against linear scaling from the 1-rank baseline, efficiency and overlap (E5, E6: ref. [1] Figs 5-7)",
       nullptr, plot_scaling},
      // hpcnn-simulate's points: the scaling figures with the simulated network, the exchange time
      // the simulation gives beside its alpha-beta estimate, and what the simulation cost
      {"simulation", "model,exchange,topology,nodes,ranks,link_gbps,network_model,img_per_s,efficiency,comm_wait_s,comm_s,analytic_comm_s,sim_wall_s,sim_pss_mib,status",
       "hpcnn-simulate: simulated scaling (images/s, efficiency) per network, the step's exchange alone (comm_s) beside its alpha-beta estimate (analytic_comm_s), the simulation's wall time and memory",
       nullptr, plot_scaling},
      {"simulated-allreduce", "exchange,topology,nodes,ranks,link_gbps,network_model,size_bytes,time_avg_us,busbw_gbs,analytic_comm_s,sim_wall_s,status",
       "hpcnn-simulate --allreduce-sizes: the simulated call of hpcnn-allreduce per scheme, network and size, beside its alpha-beta estimate",
       nullptr, nullptr},
      // distributed training on real data: experiment E8's table (docs/EXPERIMENTS.md) (per model and scheme the
      // median phases of a step, cached or read from the files) and the convergence per epoch and
      // training time, one curve per exchange and worker count (--plot: accuracy vs epoch and vs time)
      {"e8", "model,dataset,exchange,workers,cache,data_fs,storage,sharding,load_s,load_work_s,forward_s,backward_s,comm_wait_s,update_s,iter_median_s,epoch_s,test_acc,staleness_mean,data_cache_mib,peak_rss_mib,status",
       "hpcnn-scale --data: median load, forward, backward, communication wait and update per step by model, scheme and loading (E8, allreduce against parameter server on real data: ref. [4] Figs 3-9, Table V)",
       nullptr, plot_breakdown},
      {"convergence", "model,dataset,exchange,sharding,cache,storage,workers,batch,global_batch,epoch,train_time_s,train_acc,test_acc,staleness_mean,epoch_s,test_s,target_accuracy,epochs_to_accuracy,time_to_accuracy_s,status",
       "hpcnn-scale --data: accuracy per epoch against the training time so far, and the time to --target-accuracy (MLPerf's measure)",
       accuracy_rows, plot_convergence},
      // GPU points
      {"gpu", "suite,model,backend,dataset,precision,batch,ranks,img_per_s,gpu_peak_mib,gpu_used_mib,joules_per_image,gpu_power_w",
       "GPU points: throughput, peak device memory (E2 on a GPU: ref. [1] Fig 2) and energy per image (NVML)", nullptr, nullptr},
  };
  return table;
}

const TablePreset* find_table_preset(const std::string& name) {
  for (const TablePreset& p : table_presets())
    if (name == p.name) return &p;
  return nullptr;
}

const TablePreset& preset_for(const ResultRun& run) {
  if (const TablePreset* declared = find_table_preset(run.provenance.default_table)) return *declared;
  // Files written before their suite declared its table: the table each suite declares today.
  const char* name = "throughput";
  if (!run.points.empty()) {
    const Record& r = run.points.front().record;
    const std::string suite = r.text("suite");
    if (suite == "hpcnn-allreduce") name = r.text("exchange") == "links" ? "links" : "allreduce";
    else if (suite == "hpcnn-scale") name = r.get("epochs") ? "e8" : "scaling";
    else if (suite == "hpcnn-simulate") name = r.get("size_bytes") ? "simulated-allreduce" : "simulation";
    else if (suite == "hpcnn-blas") name = "blas";
    else if (r.get("epochs")) name = "accuracy";  // hpcnn-train --data
  }
  return *find_table_preset(name);
}

std::vector<Record> preset_rows(const TablePreset& preset, const ResultRun& run) {
  if (preset.rows) {
    std::vector<Record> rows;
    for (const ResultPoint& point : run.points)
      for (Record& r : preset.rows(run, point)) rows.push_back(std::move(r));
    return rows;
  }
  std::vector<Record> rows;
  rows.reserve(run.points.size());
  for (const ResultPoint& point : run.points) rows.push_back(point.record);
  return rows;
}

}  // namespace hpcnn
