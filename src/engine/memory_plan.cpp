// Greedy-by-size offset assignment for buffers with known lifetimes (see memory_plan.hpp).
#include "engine/memory_plan.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace hpcnn {

namespace {

std::size_t aligned(std::size_t bytes) { return (std::max<std::size_t>(bytes, 1) + kPlanAlign - 1) / kPlanAlign * kPlanAlign; }

bool live_together(const BufferLifetime& a, const BufferLifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

MemoryPlan plan_memory(std::span<const BufferLifetime> buffers) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<std::size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by first use, so the plan does not depend on the sort's whims.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (aligned(buffers[a].bytes) != aligned(buffers[b].bytes)) return aligned(buffers[a].bytes) > aligned(buffers[b].bytes);
    return buffers[a].first < buffers[b].first;
  });
  std::vector<std::size_t> placed;
  for (std::size_t k : order) {
    const std::size_t size = aligned(buffers[k].bytes);
    plan.unplanned_bytes += size;
    // The byte ranges taken, for this buffer's lifetime, by buffers already placed, by offset.
    std::vector<std::pair<std::size_t, std::size_t>> taken;
    for (std::size_t p : placed)
      if (live_together(buffers[k], buffers[p])) taken.emplace_back(plan.offsets[p], plan.offsets[p] + aligned(buffers[p].bytes));
    std::sort(taken.begin(), taken.end());
    // The lowest gap that fits (first fit over offsets keeps the arena small for nested lifetimes).
    std::size_t offset = 0;
    for (const auto& [begin, end] : taken) {
      if (begin >= offset + size) break;
      offset = std::max(offset, end);
    }
    plan.offsets[k] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
    placed.push_back(k);
  }
  return plan;
}

std::size_t live_bytes_bound(std::span<const BufferLifetime> buffers) {
  std::map<int, long long> delta;  // step -> change of the live sum at that step
  for (const BufferLifetime& b : buffers) {
    delta[b.first] += static_cast<long long>(aligned(b.bytes));
    delta[b.last + 1] -= static_cast<long long>(aligned(b.bytes));
  }
  long long live = 0, peak = 0;
  for (const auto& [step, change] : delta) {
    live += change;
    peak = std::max(peak, live);
  }
  return static_cast<std::size_t>(peak);
}

std::string check_plan(std::span<const BufferLifetime> buffers, const MemoryPlan& plan) {
  if (plan.offsets.size() != buffers.size()) return "the plan has " + std::to_string(plan.offsets.size()) + " offsets for " + std::to_string(buffers.size()) + " buffers";
  for (std::size_t a = 0; a < buffers.size(); ++a) {
    const std::size_t a_end = plan.offsets[a] + buffers[a].bytes;
    if (plan.offsets[a] % kPlanAlign || a_end > plan.arena_bytes)
      return "buffer " + std::to_string(a) + " at offset " + std::to_string(plan.offsets[a]) + " is misaligned or outside the arena of " + std::to_string(plan.arena_bytes) + " bytes";
    for (std::size_t b = a + 1; b < buffers.size(); ++b) {
      if (!live_together(buffers[a], buffers[b])) continue;
      const std::size_t b_end = plan.offsets[b] + buffers[b].bytes;
      if (plan.offsets[a] < b_end && plan.offsets[b] < a_end)
        return "buffers " + std::to_string(a) + " (steps " + std::to_string(buffers[a].first) + "-" + std::to_string(buffers[a].last) + ") and " + std::to_string(b) + " (steps " + std::to_string(buffers[b].first) + "-" + std::to_string(buffers[b].last) + ") are live together and share bytes";
    }
  }
  return {};
}

}  // namespace hpcnn
