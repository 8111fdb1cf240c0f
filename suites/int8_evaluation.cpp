#include "suites/int8_evaluation.hpp"

#include <memory>

#include "base/errors.hpp"
#include "data/sampler.hpp"
#include "suites/real_data.hpp"

namespace hpcnn {

Int8Evaluation evaluate_int8(const ModelPoint& mp, int calibration_batches, int test_batch, const data::ImageSet& train,
                             const data::ImageSet& test, const data::Normalization& norm, const Graph& graph,
                             const std::vector<float>& params, std::vector<float> buffers, MPI_Comm comm,
                             LibraryVersions& libraries) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (!buffers.empty()) MPI_Bcast(buffers.data(), static_cast<int>(buffers.size()), MPI_FLOAT, 0, comm);
  std::vector<std::vector<std::uint32_t>> batches =
      data::rank_batches(data::epoch_order(train.size(), mp.seed, 0, false), mp.batch, rank, size);
  if (batches.size() > static_cast<std::size_t>(calibration_batches)) batches.resize(calibration_batches);
  int count = static_cast<int>(batches.size());
  MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_INT, MPI_MIN, comm);  // every rank calibrates alike
  if (count < 1) throw RuntimeError("--eval-int8: a rank has no training batch to calibrate on");
  batches.resize(static_cast<std::size_t>(count));
  data::BatchLoader loader(train, norm, real_data_pipeline(mp, false, 0, false));
  loader.start_epoch(0, batches);
  ModelPoint q = mp;
  q.settings.precision = Precision::Int8;
  q.calibration_batches = count;
  q.settings.calibration = calibrate_point(
      mp, graph, count,
      [&](Network& net, int k) {
        if (k == 0) {
          net.set_params(params);
          net.set_buffers(buffers);
        }
        const data::Batch b = loader.next(nullptr);
        // A short last batch of a tiny set: padded with its first image (ranges only).
        std::vector<float> images = b.images;
        std::vector<std::int32_t> labels = b.labels;
        const std::size_t per = images.size() / static_cast<std::size_t>(b.size > 0 ? b.size : 1);
        for (int i = b.size; i < mp.batch; ++i) {
          images.insert(images.end(), b.images.begin(), b.images.begin() + static_cast<long>(per));
          labels.push_back(b.labels.empty() ? 0 : b.labels.front());
        }
        net.set_input(images.data(), labels.data());
      },
      comm);
  std::unique_ptr<Backend> backend = make_point_backend(q, libraries);
  Evaluator evaluator(*backend, graph, network_options(q, test_batch, Mode::Infer), test, norm,
                      real_data_pipeline(mp, false, 0, false), test_batch, comm);
  Int8Evaluation out;
  out.test = evaluator.run(params, buffers);
  out.exceptions = backend->precision_exceptions();
  return out;
}

}  // namespace hpcnn
