// The executor's memory plan: where in one arena each activation and gradient buffer lives, so that
// buffers whose values are never needed at the same time share bytes. network.cpp describes every
// buffer by its size and the steps of a training step (forward of node i, then backward in reverse)
// during which its value is needed; plan_memory packs them. Pure functions, no device memory.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace hpcnn {

// One buffer: `bytes` that must stay untouched by anyone else from step `first` to step `last`
// (inclusive: an op that reads one buffer and writes another in the same step needs both).
struct BufferLifetime {
  std::size_t bytes = 0;
  int first = 0;
  int last = 0;
};

struct MemoryPlan {
  std::vector<std::size_t> offsets;  // [buffer] byte offset in the arena, a multiple of kPlanAlign
  std::size_t arena_bytes = 0;       // the arena's size: the plan's peak
  std::size_t unplanned_bytes = 0;   // every buffer on its own (what no plan allocates), aligned
};

// Offsets are multiples of this (cuDNN wants 256-byte aligned pointers; oneDNN 64).
inline constexpr std::size_t kPlanAlign = 256;

// Packs the buffers: largest first, each at the lowest offset where it overlaps no buffer already
// placed whose lifetime overlaps its own (the greedy-by-size heuristic; within a few percent of
// the lower bound, the largest sum of sizes live at one step, for chains like ResNets).
MemoryPlan plan_memory(std::span<const BufferLifetime> buffers);

// The largest sum of (aligned) sizes live at one step: no plan can use less.
std::size_t live_bytes_bound(std::span<const BufferLifetime> buffers);

// Empty when no two buffers that are live at the same step share a byte and every buffer lies
// inside the arena; else a line naming the first conflict (the executor checks every plan it uses).
std::string check_plan(std::span<const BufferLifetime> buffers, const MemoryPlan& plan);

}  // namespace hpcnn
