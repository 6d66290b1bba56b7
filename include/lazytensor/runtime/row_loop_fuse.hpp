#pragma once
// RowLoop's bf16 ops in one pass: an op recorded on bf16 tensors is a widening of each
// operand, the op in f32 and a narrowing of its result (lt::record); in a fused group the
// narrowing runs the op's bf16 form (kernels/bf16_map.hpp) on the operands' bf16 values, so
// that the op makes one pass over a tile, not one per cast.
#include <cstddef>
#include <vector>

#include "lazytensor/core/dtype.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/runtime/row_loop_class.hpp"

namespace lt::detail {

inline bool RowLoop::adopt_bf16_op(Member& into, const Member& op) const {
  const BoundKernel::Map map = op.kernel.bf16_form != nullptr ? op.kernel.bf16_form(into.fused_uniform) : nullptr;
  if (map == nullptr || op.kernel.input != DType::f32) return false;
  into.kernel = op.kernel;
  into.kernel.map = map;
  into.kernel.map_uniform_last = nullptr;
  into.kernel.bf16_form = nullptr;
  into.kernel.converts = false;
  return true;
}

inline void RowLoop::fuse_bf16_ops() {
  // Each member's readers: how many inputs read it, and the last of them.
  std::vector<int> reads(members_.size(), 0), reader(members_.size(), -1);
  for (std::size_t j = 0; j < members_.size(); ++j)
    for (const Input& in : inputs_of(members_[j]))
      if (in.member >= 0) ++reads[idx(in.member)], reader[idx(in.member)] = static_cast<int>(j);
  // A widening of bf16 values, each as wide as the op's, that no one sees.
  auto bf16_widening = [&](const Member& w, std::int64_t per) {
    if (!w.kernel.converts || w.constant || w.materialized || w.kernel.input != DType::bf16 || w.out_dtype != DType::f32 ||
        w.input_count != 1 || w.per != per)
      return false;
    const Input& from = inputs_of(w)[0];
    return from.per == per && from.fixed_at < 0 && from.filled_at < 0 && from.converted_at < 0;
  };
  bool any = false;
  bf16_ops_ = 0;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    Member& op = members_[i];
    if (op.constant || op.reduction || op.kernel.converts || op.kernel.bf16_form == nullptr || op.materialized ||
        op.per != g_.row || op.per_row_inputs || op.input_count == 0 || op.input_count > 2 ||
        op.kernel.input != DType::f32 || op.out_dtype != DType::f32 || reads[i] != 1)
      continue;
    Member& narrowing = members_[idx(reader[i])];
    if (!narrowing.kernel.converts || narrowing.kernel.input != DType::f32 || narrowing.out_dtype != DType::bf16 ||
        narrowing.input_count != 1 || narrowing.per != op.per)
      continue;
    Input operands[2];
    unsigned uniform = 0;
    bool bf16_operands = true;
    for (std::size_t k = 0; k < op.input_count && bf16_operands; ++k) {
      const Input& in = inputs_of(op)[k];
      if (in.fixed_at >= 0) {  // a scalar: one f32 value, as the op reads it
        uniform |= 1u << k;
        operands[k] = in;
      } else if (in.member >= 0 && bf16_widening(members_[idx(in.member)], op.per)) {
        operands[k] = inputs_of(members_[idx(in.member)])[0];
      } else {
        bf16_operands = false;
      }
    }
    if (!bf16_operands || uniform == (1u << op.input_count) - 1) continue;
    narrowing.fused_uniform = uniform;
    if (!adopt_bf16_op(narrowing, op)) continue;
    narrowing.fused_op = static_cast<int>(i);
    narrowing.first_input = inputs_.size();
    narrowing.input_count = op.input_count;
    for (std::size_t k = 0; k < op.input_count; ++k) inputs_.push_back(operands[k]);
    narrowing.fixed_inputs = uniform != 0;
    narrowing.uniform_last = false;
    narrowing.one_call = true;  // the scalars are read once, not as filled runs
    op.absorbed = true;
    ++bf16_ops_;
    any = true;
  }
  if (!any) return;
  // Widenings only absorbed ops read do not run either.
  std::vector<bool> live_reader(members_.size(), false);
  for (std::size_t j = members_.size(); j-- > 0;) {
    const Member& r = members_[j];
    if (r.absorbed) continue;
    for (const Input& in : inputs_of(r))
      if (in.member >= 0) live_reader[idx(in.member)] = true;
  }
  for (std::size_t k = 0; k < members_.size(); ++k) {
    Member& w = members_[k];
    if (!live_reader[k] && !w.materialized && w.kernel.converts && w.out_dtype == DType::f32 && reads[k] > 0) w.absorbed = true;
  }
}

}  // namespace lt::detail
