// What the engine knows about each kind of operator, in one table (op_kinds.cpp): its names, the
// fusions it allows, whether it owns memory and the FLOPs it does. Adding a kind means a row
// there, its shape rule (graph.cpp, infer_shape) and its case in each backend's dispatch.
#pragma once

#include "engine/graph.hpp"

namespace hpcnn {

struct OpKindFacts {
  OpKind kind;
  const char* profile_name;  // op_kind_name(): as the per-operator profile reports it
  const char* name_prefix;   // automatic node names ("conv3", "bn7")
  bool takes_relu;           // a ReLU that is its only consumer may be computed by the op itself
  bool has_weights;          // backward computes a weight gradient (and a data gradient unless on the input)
  bool is_view;              // a view of its input: moves no bytes
  bool reuses_input_memory;  // may run in its input's memory: no activation memory of its own
  // Forward FLOPs of one call at `batch`.
  double (*forward_flops)(const Graph& g, const Node& n, int batch);
};

// The row of `kind` (every OpKind has one).
const OpKindFacts& op_kind_facts(OpKind kind);

// Elements of `n`'s inputs and output at `batch` (the cost rules' terms).
double op_input_elements(const Graph& g, const Node& n, int batch);
double op_output_elements(const Node& n, int batch);

}  // namespace hpcnn
