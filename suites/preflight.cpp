#include "suites/preflight.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectives/exchange.hpp"
#include "collectives/message_buffer.hpp"
#include "collectives/mpi_cuda.hpp"
#include "engine/backend.hpp"
#include "harness/rank_series.hpp"
#include "kernels/registry.hpp"

namespace hpcnn {

namespace {

// One rank's findings; `failure` is the first check that failed there ("" when none).
struct Row {
  std::vector<std::string> cells;
  std::string failure;
  bool gpu_wanted = false;
  bool has_gpu = false;
  std::string no_gpu_reason;
};

const std::vector<std::string> kHeader = {"rank", "host", "local", "gpu", "gpu name", "bus id",
                                          "nccl", "cuda-aware mpi", "backends"};

int local_rank(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  int rank = 0, local = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  return local;
}

// Creates every --backend (what a run would do first): "dnnl:cpu cuda:gpu", or the error.
std::string check_backends(const Options& o, Row& row) {
  std::string cell;
  for (const std::string& name : o.values("backend")) {
    cell.append(cell.empty() ? "" : " ").append(name);
    try {
      const bool gpu = make_backend(name)->is_gpu();
      row.gpu_wanted |= gpu;
      cell.append(gpu ? ":gpu" : ":cpu");
    } catch (const std::exception& e) {
      cell.append(":failed");
      if (row.failure.empty()) row.failure = std::string("backend ").append(name).append(": ").append(e.what());
    }
  }
  return cell;
}

const ExchangeInfo* nccl_scheme() {
  for (const ExchangeInfo& e : exchanges())
    if (e.name == "nccl") return &e;
  return nullptr;
}

// 1-element allreduce of rank + 1 over comm: the sum must be P(P+1)/2, exact in floats.
// Collective: every rank calls it with the same all_have_gpu.
std::string check_nccl(MPI_Comm comm, bool all_have_gpu, Row& row) {
  const ExchangeInfo* nccl = nccl_scheme();
  if (!nccl) return "skipped: no CUDA in this build";
  if (!all_have_gpu) return "skipped: not every rank has a GPU";
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  try {
    std::unique_ptr<Allreduce> allreduce = nccl->make_allreduce(comm);  // agrees on set-up failures
    std::unique_ptr<MessageBuffer> one = make_message_buffer(true, 1);
    std::vector<float> value = {static_cast<float>(rank + 1)};
    one->fill(value);
    allreduce->run(one->data(), 1);
    one->read(value);
    const float want = static_cast<float>(size) * static_cast<float>(size + 1) / 2.0f;
    if (value[0] == want) return std::string("ok (sum ").append(std::to_string(static_cast<long long>(want))).append(")");
    row.failure = std::string("nccl: 1-element allreduce gave ").append(std::to_string(value[0])).append(", want ")
                      .append(std::to_string(want));
  } catch (const std::exception& e) {
    row.failure = std::string("nccl: ").append(e.what());
  }
  return "failed";
}

// The GPU this rank would use: index, name, bus id; or "no GPU: reason" in the first cell.
std::vector<std::string> check_gpu(Row& row) {
  const BackendInfo* gpu = gpu_backend();
  row.no_gpu_reason = !gpu ? "this build has no CUDA" : gpu->unavailable ? gpu->unavailable() : "";
  if (!row.no_gpu_reason.empty()) return {std::string("no GPU: ").append(row.no_gpu_reason), "-", "-"};
  try {
    const GpuDevice device = gpu->select_device();
    row.has_gpu = true;
    return {std::to_string(device.index), device.name, device.bus_id};
  } catch (const std::exception& e) {
    row.no_gpu_reason = e.what();
    if (row.failure.empty()) row.failure = e.what();
    return {std::string("failed: ").append(row.no_gpu_reason), "-", "-"};
  }
}


// Columns of a gathered row.
enum Column { kRank, kHost, kLocal, kGpu, kGpuName, kBusId, kNccl, kAware, kBackends };

// "0-3" for 0,1,2,3; "0,2" otherwise (the values as they came, duplicates dropped).
std::string joined_values(const std::vector<std::string>& values) {
  std::vector<std::string> distinct;
  for (const std::string& v : values)
    if (std::find(distinct.begin(), distinct.end(), v) == distinct.end()) distinct.push_back(v);
  bool numbers = !distinct.empty();
  for (std::size_t i = 0; i < distinct.size() && numbers; ++i)
    numbers = distinct[i].find_first_not_of("0123456789") == std::string::npos && !distinct[i].empty() &&
              (i == 0 || std::stol(distinct[i]) == std::stol(distinct[i - 1]) + 1);
  if (numbers && distinct.size() > 1) return distinct.front() + "-" + distinct.back();
  constexpr std::size_t kShown = 4;  // a node's GPUs; more would only widen the table
  std::string text;
  for (std::size_t i = 0; i < distinct.size() && i < kShown; ++i) text.append(i ? "," : "").append(distinct[i]);
  if (distinct.size() > kShown) text.append(",+").append(std::to_string(distinct.size() - kShown));
  return text;
}

// Consecutive ranks on one host whose findings agree (the GPU they were given aside) share a row:
// the table has a row per host, not per rank, however many ranks a job has.
std::vector<std::vector<std::string>> grouped(const std::vector<std::vector<std::string>>& rows) {
  auto same = [](const std::vector<std::string>& a, const std::vector<std::string>& b) {
    for (Column c : {kHost, kGpuName, kNccl, kAware, kBackends})
      if (a[c] != b[c]) return false;
    return true;
  };
  std::vector<std::vector<std::string>> out;
  for (std::size_t first = 0; first < rows.size();) {
    std::size_t last = first;
    while (last + 1 < rows.size() && same(rows[first], rows[last + 1])) ++last;
    std::vector<std::string> row = rows[first];
    for (Column c : {kRank, kLocal, kGpu, kBusId}) {
      std::vector<std::string> values;
      for (std::size_t r = first; r <= last; ++r) values.push_back(rows[r][c]);
      row[c] = joined_values(values);
    }
    out.push_back(std::move(row));
    first = last + 1;
  }
  return out;
}

void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(kHeader.size());
  for (std::size_t c = 0; c < kHeader.size(); ++c) {
    width[c] = kHeader[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], c < row.size() ? row[c].size() : 0);
  }
  auto line = [&](const std::vector<std::string>& row) {
    std::string text;
    for (std::size_t c = 0; c < kHeader.size(); ++c) {
      std::string cell = c < row.size() ? row[c] : "";
      if (c + 1 < kHeader.size()) cell.resize(width[c], ' ');
      text.append(c ? "  " : "").append(cell);
    }
    std::printf("%s\n", text.c_str());
  };
  line(kHeader);
  for (const auto& row : rows) line(row);
}

}  // namespace

int run_preflight(const Options& o, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Row row;
  for (const std::string& name : o.values("exchange"))
    row.gpu_wanted |= find_exchange(name).access == BufferAccess::Device;
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int host_length = 0;
  MPI_Get_processor_name(host, &host_length);
  const std::string backends = check_backends(o, row);
  const std::vector<std::string> gpu = check_gpu(row);
  int has = row.has_gpu ? 1 : 0, all_have = 0;
  MPI_Allreduce(&has, &all_have, 1, MPI_INT, MPI_MIN, comm);
  const std::string nccl = check_nccl(comm, all_have != 0, row);
  const MpiCudaSupport mpi = mpi_cuda_support();
  const std::string aware = std::string("compile ").append(mpi.compile_time ? "yes" : "no")
                                .append(", run ").append(mpi.run_time ? "yes" : "no");
  if (row.failure.empty() && row.gpu_wanted && !row.has_gpu)
    row.failure = std::string("a GPU was asked for (GPU backend or --exchange nccl) but rank ")
                      .append(std::to_string(rank)).append(" has none: ").append(row.no_gpu_reason);
  const auto rows = gather_strings({std::to_string(rank), std::string(host, static_cast<std::size_t>(host_length)),
                                 std::to_string(local_rank(comm)), gpu[0], gpu[1], gpu[2], nccl, aware, backends},
                                comm);
  // The lowest failing rank's failure decides the exit status on every rank.
  const std::vector<std::vector<std::string>> failures = gather_strings({row.failure, row.no_gpu_reason}, comm);
  int failed = row.failure.empty() ? 0 : 1, any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, comm);
  if (rank == 0) {
    print_table(grouped(rows));
    std::string first_failure, first_missing;
    for (std::size_t r = 0; r < failures.size(); ++r) {
      const std::string who = std::string("rank ").append(std::to_string(r)).append(": ");
      if (first_failure.empty() && !failures[r][0].empty()) first_failure = who + failures[r][0];
      if (first_missing.empty() && !failures[r][1].empty()) first_missing = who + failures[r][1];
    }
    if (!first_failure.empty()) std::printf("preflight: FAILED: %s\n", first_failure.c_str());
    else if (!first_missing.empty()) std::printf("preflight: ok; GPU checks skipped: %s\n", first_missing.c_str());
    else std::printf("preflight: ok\n");
    std::fflush(stdout);
    if (!first_failure.empty()) std::fprintf(stderr, "hpcnn-scale: error: preflight failed: %s\n", first_failure.c_str());
  }
  return any_failed ? 1 : 0;
}

}  // namespace hpcnn
