#pragma once
// The GradBuilder of the autograd layer: gradient rules' ops recorded as tensor ops, so the
// backward graph is traced like any other (a lazy device runs it at the next barrier).
#include <vector>

#include "lazytensor/core/metrics.hpp"
#include "lazytensor/ops/grad.hpp"
#include "lazytensor/ops/registry.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt::detail {

class TensorGradBuilder final : public GradBuilder {
 public:
  explicit TensorGradBuilder(Device device) : device_(device) {}
  TensorGradBuilder(const TensorGradBuilder&) = delete;
  TensorGradBuilder& operator=(const TensorGradBuilder&) = delete;

  GradValue add(Tensor t) {
    values_.push_back(std::move(t));
    return {this, static_cast<int>(values_.size() - 1)};
  }
  const Tensor& tensor(const GradValue& v) const { return values_[static_cast<std::size_t>(v.id)]; }

  GradValue apply(OpId id, std::span<const GradValue> inputs, Attrs attrs) override {
    const OpDesc* op = find_op(id);
    LT_CHECK(op != nullptr, "internal: a gradient rule used op id ", static_cast<int>(id), ", which is not registered");
    std::vector<Tensor> in;
    in.reserve(inputs.size());
    for (const GradValue& v : inputs) in.push_back(tensor(v));
    return add(record(*op, in, std::move(attrs), device_));
  }

  GradValue constant(std::span<const double> values, const Shape& shape, DType dtype) override {
    Array a = Array::empty(dtype, shape);
    visit(dtype, [&]<class T>(Tag<T>) {
      for (std::size_t k = 0; k < values.size(); ++k) a.view.ptr<T>()[k] = static_cast<T>(values[k]);
    });
    if (device_.is_lazy()) metrics::counter_handle("TransferToDevice").add();
    return add(tensor_from_array(a, device_));
  }

  const Meta& meta(int id) const override { return values_[static_cast<std::size_t>(id)].meta(); }

 private:
  Device device_;
  std::vector<Tensor> values_;
};

}  // namespace lt::detail
