// hpcnn-train --data --eval-int8: the trained model's test set evaluated once more in int8 (the
// dnnl backend's post-training static quantization), so that the accuracy int8 costs is measured
// on the same weights as the fp32 figure beside it.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "data/batch_loader.hpp"
#include "data/image_set.hpp"
#include "engine/backend.hpp"
#include "suites/evaluator.hpp"
#include "suites/model_point.hpp"

namespace hpcnn {

struct Int8Evaluation {
  Evaluation test;         // loss, top-1 (%), seconds
  std::string exceptions;  // layers that ran in fp32 (Backend::precision_exceptions)
};

// Calibrates on the first `calibration_batches` training batches of this rank's shard (in file
// order, no augmentation; an fp32 network with the trained parameters and batch-norm statistics,
// rank 0's, as the evaluation uses), makes an int8 backend of mp's with the ranges agreed over the
// ranks, and evaluates the whole test set. Collective over comm.
Int8Evaluation evaluate_int8(const ModelPoint& mp, int calibration_batches, int test_batch, const data::ImageSet& train,
                             const data::ImageSet& test, const data::Normalization& norm, const Graph& graph,
                             const std::vector<float>& params, std::vector<float> buffers, MPI_Comm comm,
                             LibraryVersions& libraries);

}  // namespace hpcnn
