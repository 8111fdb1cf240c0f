#include "kernels/cuda/conv_graph.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/device.hpp"

namespace hpcnn::cuda {

namespace {

constexpr std::int64_t kX = 'x', kW = 'w', kY = 'y';

// Thrown inside the constructor when a step fails; turned into why_not().
struct GraphError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void ck(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw GraphError(std::string(what) + ": " + cudnnGetErrorString(s));
}

struct Desc {
  explicit Desc(cudnnBackendDescriptorType_t t) { ck(cudnnBackendCreateDescriptor(t, &d), "create descriptor"); }
  explicit Desc(cudnnBackendDescriptor_t existing) : d(existing) {}
  ~Desc() {
    if (d) cudnnBackendDestroyDescriptor(d);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  cudnnBackendDescriptor_t release() {
    auto r = d;
    d = nullptr;
    return r;
  }
  template <typename T>
  void set(cudnnBackendAttributeName_t n, cudnnBackendAttributeType_t t, std::int64_t count, const T* v) {
    ck(cudnnBackendSetAttribute(d, n, t, count, v), "set attribute");
  }
  void finalize(const char* what) { ck(cudnnBackendFinalize(d), what); }
  cudnnBackendDescriptor_t d = nullptr;
};

// A 4-D tensor {n, c, h, w} stored NHWC or NCHW.
cudnnBackendDescriptor_t tensor(std::int64_t uid, const Shape& s, const Layout& l) {
  Desc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const std::int64_t dims[4] = {s.n, s.c, s.h, s.w};
  const std::int64_t nchw[4] = {std::int64_t(s.c) * s.h * s.w, std::int64_t(s.h) * s.w, s.w, 1};
  const std::int64_t nhwc[4] = {std::int64_t(s.c) * s.h * s.w, 1, std::int64_t(s.w) * s.c, s.c};
  const cudnnDataType_t type = l.bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
  const std::int64_t alignment = 16;  // every buffer we pass is 256-byte aligned
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
  t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, l.nhwc ? nhwc : nchw);
  t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  t.finalize("tensor");
  return t.release();
}

bool uses_tensor_cores(cudnnBackendDescriptor_t cfg) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  std::int64_t n = 0;
  ck(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine.d),
     "engine of config");
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  std::int64_t count = 0;
  ck(cudnnBackendGetAttribute(engine.d, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                              CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes),
     "numerical notes");
  for (std::int64_t i = 0; i < count; ++i)
    if (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE || notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)
      return true;
  return false;
}

// Engine configurations of an operation graph, ranked by cuDNN's heuristics (mode A); owns them.
struct EngineConfigs {
  explicit EngineConfigs(cudnnBackendDescriptor_t graph) {
    Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    heur.finalize("engine heuristics");
    std::int64_t count = 0, got = 0;
    ck(cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
       "heuristics count");
    for (std::int64_t i = 0; i < count; ++i) {
      cudnnBackendDescriptor_t d = nullptr;
      ck(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &d), "create engine config");
      list.push_back(d);
    }
    ck(cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                list.data()),
       "heuristics");
    for (std::size_t i = static_cast<std::size_t>(got); i < list.size(); ++i) cudnnBackendDestroyDescriptor(list[i]);
    list.resize(static_cast<std::size_t>(got));
  }
  ~EngineConfigs() {
    for (auto d : list) cudnnBackendDestroyDescriptor(d);
  }
  EngineConfigs(const EngineConfigs&) = delete;
  EngineConfigs& operator=(const EngineConfigs&) = delete;
  std::vector<cudnnBackendDescriptor_t> list;
};

}  // namespace

cudnnBackendDescriptor_t GraphConv::usable_plan(cudnnBackendDescriptor_t cfg, std::size_t& workspace) {
  // Strict FP32 takes no tensor-core engine; a plan must build and fit the workspace limit.
  if (!tensor_cores_ && uses_tensor_cores(cfg)) return nullptr;
  cudnnBackendDescriptor_t plan = nullptr;
  std::size_t need = 0;
  if (build_plan(cfg, plan, need) && need <= c_.workspace_limit) {
    workspace = need;
    return plan;
  }
  if (plan) cudnnBackendDestroyDescriptor(plan);
  return nullptr;
}

GraphConv::GraphConv(Context& c, ConvKind kind, const Shape& xs, const Shape& ws, const Shape& ys, const OpAttr& a,
                     const Layout& l, bool tensor_cores)
    : c_(c), tensor_cores_(tensor_cores) {
  try {
    Desc x(tensor(kX, xs, l)), w(tensor(kW, ws, l)), y(tensor(kY, ys, l));

    Desc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    const std::int64_t dims = 2, pad[2] = {a.ph, a.pw}, stride[2] = {a.sh, a.sw}, dil[2] = {1, 1};
    const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
    conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil);
    conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
    conv.finalize("convolution");

    // The operation's attribute names per direction; the same x/w/y tensors take the roles
    // X/W/Y (forward), DX/W/DY (backward data), X/DW/DY (backward filter).
    struct OpNames {
      cudnnBackendDescriptorType_t type;
      cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
    };
    const OpNames names =
        kind == ConvKind::Forward
            ? OpNames{CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA}
        : kind == ConvKind::BackwardData
            ? OpNames{CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
                      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA}
            : OpNames{CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
                      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
                      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
                      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
    const float alpha = 1.0f, beta = 0.0f;
    const auto bd = CUDNN_TYPE_BACKEND_DESCRIPTOR;
    Desc op(names.type);
    op.set(names.x, bd, 1, &x.d);
    op.set(names.w, bd, 1, &w.d);
    op.set(names.y, bd, 1, &y.d);
    op.set(names.conv, bd, 1, &conv.d);
    op.set(names.alpha, CUDNN_TYPE_FLOAT, 1, &alpha);
    op.set(names.beta, CUDNN_TYPE_FLOAT, 1, &beta);
    op.finalize("convolution operation");

    Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, bd, 1, &op.d);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &c.cudnn);  // still read by 9.x heuristics
#pragma GCC diagnostic pop
    graph.finalize("operation graph");

    // The first configuration in cuDNN's ranking that gives a usable plan.
    const EngineConfigs cfgs(graph.d);
    for (std::size_t i = 0; i < cfgs.list.size() && !plan_; ++i) plan_ = usable_plan(cfgs.list[i], workspace_);
    if (!plan_) why_ = "no engine configuration of " + std::to_string(cfgs.list.size()) + " builds a plan";
    graph_ = graph.release();
  } catch (const GraphError& e) {
    why_ = e.what();
  }
}

GraphConv::~GraphConv() {
  if (plan_) cudnnBackendDestroyDescriptor(plan_);
  if (graph_) cudnnBackendDestroyDescriptor(graph_);
}

bool GraphConv::build_plan(cudnnBackendDescriptor_t cfg, cudnnBackendDescriptor_t& plan, std::size_t& ws) {
  if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) != CUDNN_STATUS_SUCCESS) return false;
  if (cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &c_.cudnn) != CUDNN_STATUS_SUCCESS ||
      cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg) !=
          CUDNN_STATUS_SUCCESS ||
      cudnnBackendFinalize(plan) != CUDNN_STATUS_SUCCESS)
    return false;
  std::int64_t n = 0, bytes = 0;
  if (cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &bytes) !=
      CUDNN_STATUS_SUCCESS)
    return false;
  ws = static_cast<std::size_t>(bytes);
  return true;
}

namespace {
void execute(Context& c, cudnnBackendDescriptor_t plan, void* x, void* w, void* y, void* workspace) {
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  void* ptrs[3] = {x, w, y};
  const std::int64_t uids[3] = {kX, kW, kY};
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  pack.finalize("variant pack");
  ck(cudnnBackendExecute(c.cudnn, plan, pack.d), "execute");
}
}  // namespace

void GraphConv::run(void* x, void* w, void* y) {
  try {
    execute(c_, plan_, x, w, y, c_.workspace(workspace_));
  } catch (const GraphError& e) {
    check_cudnn(CUDNN_STATUS_EXECUTION_FAILED, ("convolution (graph API): " + std::string(e.what())).c_str());
  }
}

void GraphConv::autotune(void* x, void* w, void* y) {
  // Rebuild the candidate list and time up to kCandidates plans, 2 runs each, keeping the fastest.
  constexpr int kCandidates = 8;
  try {
    const EngineConfigs cfgs(graph_);
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    float best = 0;
    cudnnBackendDescriptor_t best_plan = nullptr;
    std::size_t best_ws = 0;
    int tried = 0;
    for (std::size_t i = 0; i < cfgs.list.size() && tried < kCandidates; ++i) {
      std::size_t need = 0;
      cudnnBackendDescriptor_t plan = usable_plan(cfgs.list[i], need);
      if (!plan) continue;
      ++tried;
      void* ws = c_.workspace(need);
      float ms = 0;
      try {
        execute(c_, plan, x, w, y, ws);  // warm-up
        check(cudaEventRecord(start, c_.stream), "cudaEventRecord");
        execute(c_, plan, x, w, y, ws);
        check(cudaEventRecord(stop, c_.stream), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      } catch (const GraphError&) {
        cudnnBackendDestroyDescriptor(plan);
        continue;
      }
      if (best_plan == nullptr || ms < best) {
        if (best_plan) cudnnBackendDestroyDescriptor(best_plan);
        best_plan = plan;
        best_ws = need;
        best = ms;
      } else {
        cudnnBackendDestroyDescriptor(plan);
      }
    }
    if (best_plan) {
      if (plan_) cudnnBackendDestroyDescriptor(plan_);
      plan_ = best_plan;
      workspace_ = best_ws;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  } catch (const GraphError&) {
    // keep the heuristic plan
  }
}

}  // namespace hpcnn::cuda
