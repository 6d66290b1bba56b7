#pragma once
// lt::Expr: an elementwise expression that has not been recorded yet. Elementwise functions
// and operators build one from tensors, C++ scalars and other expressions; it holds its
// operands by value, so `auto e = relu(a * b + c);` never dangles, and it records nothing until
// it is committed: converted to lt::Tensor (assigned, passed to a non-elementwise op, read).
// Then it becomes ONE node, a fragment, whose fused kernel was compiled with the program.
// Each conversion records anew; keep the Tensor when a value is used twice.
#include <array>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>

#include "lazytensor/expr/fragment.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt {

namespace hana = boost::hana;

namespace detail {

struct NoAttrs {};
template <const auto& Op> using attrs_storage = std::conditional_t<expr::reads_attrs<Op>, Attrs, NoAttrs>;

/// What tracing knows of an expression before it is recorded, checked when it is built so
/// that bad operands fail where the op is written, as they do when ops record one by one.
struct ExprInfo {
  Meta meta;
  Device device;
  DType compute;  // the type the op computes in (bool and i32 widened, as kernels do)
  /// Fused, the ops give bitwise the results they give one by one: they all compute in one
  /// type, and every intermediate result has that type or is bool (exact in it).
  bool fusible;
};

template <class X> Device device_of(const X& x) {
  if constexpr (is_expr_v<X>) return x.info.device;
  else if constexpr (std::is_same_v<X, Tensor>) return x.defined() ? x.device() : cpu;
  else return cpu;
}

/// An operand's Meta, returned by value so that it is made where the caller stores it: a
/// Meta built on the stack and then copied is read back with wide loads over the narrow
/// stores that made it, which stalls on every op traced.
template <class X> Meta meta_of(const X& x) {
  if constexpr (expr::is_scalar_leaf<X>) return Meta{Shape{}, x.value.dtype, true};
  else if constexpr (is_expr_v<X>) return x.info.meta;
  else return x.defined() ? x.meta() : Meta{};
}

template <const auto& Op, class... Xs>
ExprInfo check_expr(const hana::tuple<Xs...>& operands, const attrs_storage<Op>& attrs) {
  constexpr std::size_t n = sizeof...(Xs);
  const std::array<Meta, n> metas = hana::unpack(operands, [](const Xs&... x) { return std::array<Meta, n>{meta_of(x)...}; });
  // A scalar joins the device of the first tensor operand, as scalar_tensor does.
  Device device = cpu;
  bool found = false;
  hana::for_each(operands, [&]<class X>(const X& x) {
    if (!found && !expr::is_scalar_leaf<X>) device = device_of(x), found = true;
  });
  std::array<OperandRef, n> refs;
  std::size_t k = 0;
  hana::for_each(operands, [&]<class X>(const X& x) {
    bool defined = true;
    if constexpr (std::is_same_v<X, Tensor>) defined = x.defined();
    refs[k] = {defined ? &metas[k] : nullptr, expr::is_scalar_leaf<X> ? device : device_of(x)};
    ++k;
  });
  static const Attrs no_attrs;
  const Attrs* a = &no_attrs;
  if constexpr (expr::reads_attrs<Op>) a = &attrs;
  ExprInfo info{check_and_infer(Op, refs, metas, *a, device), device, DType::f32, true};
  using rule = typename std::remove_cvref_t<decltype(Op)>::rule;
  info.compute = kernels::compute_dtype(rule::compute(std::span<const Meta>(metas), info.meta.dtype));
  // Low-precision operands record op by op, each in f32 between casts (trace/definitions.hpp).
  info.fusible = !is_low_precision(info.meta.dtype);
  for (const Meta& m : metas) info.fusible = info.fusible && !is_low_precision(m.dtype);
  // Likewise under bf16 storage, where f32 values on lazy devices are bf16 (trace/bf16_storage.hpp).
  info.fusible = info.fusible && !(device.is_lazy() && bf16_storage());
  hana::for_each(operands, [&]<class X>(const X& x) {
    if constexpr (is_expr_v<X>)
      info.fusible = info.fusible && x.info.fusible && x.info.compute == info.compute &&
                     (x.info.meta.dtype == info.compute || x.info.meta.dtype == DType::boolean);
  });
  return info;
}

template <class E> Tensor commit(const E& e);

}  // namespace detail

template <const auto& Op, class... Operands>
class [[nodiscard("an expression records nothing until it becomes a Tensor")]] Expr : public ElementwiseMethods<Expr<Op, Operands...>> {
 public:
  /// The op at the root of the expression, a descriptor of the op table.
  static constexpr const auto& op = Op;
  /// The op's operands: tensors, expressions and C++ scalars, held by value.
  hana::tuple<Operands...> operands;
  /// The op's attributes (none for most ops).
  [[no_unique_address]] detail::attrs_storage<Op> attrs;
  /// Shape, dtype, device and fusibility, checked as the expression was built.
  detail::ExprInfo info;
  /// The line that wrote it: the node it becomes is recorded there.
  Site site;

  /// Builds the operands in place from tensors, expressions and C++ scalars.
  template <class... Xs>
  explicit Expr(detail::attrs_storage<Op> a, const Site& at, Xs&&... xs)
      : operands(std::forward<Xs>(xs)...),
        attrs(std::move(a)),
        info(detail::check_expr<Op>(operands, attrs)),
        site(at) {}

  /// Records the expression: one fragment node (one primitive node for a single op).
  operator Tensor() const { return detail::commit(*this); }  // NOLINT: implicit on purpose
  /// Records the expression and returns the Tensor, as the conversion does.
  Tensor eval() const { return *this; }

  // Known without recording anything.
  /// The result's extents.
  const Shape& shape() const { return info.meta.shape; }
  /// The result's element type.
  DType dtype() const { return info.meta.dtype; }
  /// The operands' device.
  Device device() const { return info.device; }
  /// The result's rank.
  int dim() const { return shape().rank(); }
  /// The result's number of elements.
  std::int64_t numel() const { return shape().numel(); }

  // The common non-elementwise methods, for chains such as (a - b).abs().sum(); for any
  // other, convert first: Tensor(e) or e.eval().
  /// Records the expression and reads its one value as T.
  template <class T> T item() const { return eval().template item<T>(); }
  /// Records the expression and reads every value as T.
  template <class T> std::vector<T> to_vector() const { return eval().template to_vector<T>(); }
  /// Records the expression and returns it on the cpu device.
  Tensor cpu() const { return eval().cpu(); }
  /// Records the expression and moves it to device `d`.
  Tensor to(Device d) const { return eval().to(d); }
  /// The expression converted to dtype `t` (recorded).
  Tensor to(DType t, Site at = Site::current()) const { return eval().to(t, at); }
  /// Records the expression and sums every element.
  Tensor sum(Site at = Site::current()) const { return eval().sum(at); }
  /// Records the expression and sums over `dims`.
  Tensor sum(Dims dims, bool keepdim = false, Site at = Site::current()) const { return eval().sum(dims, keepdim, at); }
  /// Records the expression and takes the mean of every element.
  Tensor mean(Site at = Site::current()) const { return eval().mean(at); }
  /// Records the expression and takes the mean over `dims`.
  Tensor mean(Dims dims, bool keepdim = false, Site at = Site::current()) const {
    return eval().mean(dims, keepdim, at);
  }
  /// Records the expression and takes its largest element.
  Tensor amax(Site at = Site::current()) const { return eval().amax(at); }
  /// Records the expression and takes its largest elements over `dims`.
  Tensor amax(Dims dims, bool keepdim = false, Site at = Site::current()) const {
    return eval().amax(dims, keepdim, at);
  }
  /// Records the expression and takes its smallest element.
  Tensor amin(Site at = Site::current()) const { return eval().amin(at); }
  /// Records the expression and takes its smallest elements over `dims`.
  Tensor amin(Dims dims, bool keepdim = false, Site at = Site::current()) const {
    return eval().amin(dims, keepdim, at);
  }
  /// Records the expression and takes the index of its largest element (flattened).
  Tensor argmax(Site at = Site::current()) const { return eval().argmax(at); }
  /// Records the expression and takes the index of its smallest element (flattened).
  Tensor argmin(Site at = Site::current()) const { return eval().argmin(at); }
  /// Records the expression and reshapes it.
  Tensor reshape(Shape shape, Site at = Site::current()) const { return eval().reshape(shape, at); }
  /// Records the expression and multiplies it by `other` (torch.matmul's rules).
  Tensor matmul(const Tensor& other, Site at = Site::current()) const { return eval().matmul(other, at); }
};

namespace detail {

/// How an expression stores an operand: C++ scalars as ScalarLeaf, the rest by value.
template <class X>
using operand_t = std::conditional_t<scalar_like<X>, expr::ScalarLeaf, std::remove_cvref_t<X>>;

template <const auto& Op, class... Xs> auto make_expr_with(Attrs attrs, const Site& site, Xs&&... operands) {
  attrs_storage<Op> stored;
  if constexpr (expr::reads_attrs<Op>) stored = std::move(attrs);
  return Expr<Op, operand_t<Xs>...>(std::move(stored), site, std::forward<Xs>(operands)...);
}
// No Attrs made and destroyed for an op that reads none: most ops, each traced.
template <const auto& Op, class... Xs> auto make_expr(const Site& site, Xs&&... operands) {
  return Expr<Op, operand_t<Xs>...>(attrs_storage<Op>{}, site, std::forward<Xs>(operands)...);
}

/// Records the expression op by op, as if it had been written with tensors.
template <class X> Tensor record_one_by_one(const X& x) {
  if constexpr (!is_expr_v<X>) {
    return x;
  } else {
    return hana::unpack(x.operands, [&]<class... Ys>(const Ys&... ys) {
      std::array<Tensor, sizeof...(Ys)> args{[&]() -> Tensor {
        if constexpr (expr::is_scalar_leaf<Ys>) return scalar_tensor(ys.value, x.info.device);
        else return record_one_by_one(ys);
      }()...};
      if constexpr (expr::reads_attrs<X::op>) return record(X::op, args, x.attrs);
      else return record(X::op, args);
    });
  }
}

/// Records `e` as `dst`'s new value; `e` is going away, so its handles of dst's state do not
/// count as sharing it (see detail::emit_into).
template <class E> void commit_into(Tensor& dst, const E& e) {
  // Recorded where it was written, or, committed inside a call under way (a composite, a
  // layer), at that call's line.
  const Site& site = recording_site_or(e.site);
  // One op on tensors alone is its own node; with a C++ scalar it is a fragment, one node
  // holding the scalar's value, rather than two (the op and a scalar leaf).
  constexpr bool single_op = expr::tree<E>::ops == 1 && expr::tree<E>::scalars == 0;
  if (single_op || !e.info.fusible) {
    RecordingSite at(site);
    dst = record_one_by_one(e);
  } else if constexpr (!single_op) {
    using S = expr::skeleton_t<E>;
    constexpr int slots = expr::slot_count<S>;
    expr::FragmentAttrsBuilder attrs(expr::structural_hash<S>, slots);
    // A tensor used twice is one input of the node. The leaves are read where the expression
    // holds them: copying a handle is an atomic count change each way, on every op traced.
    std::array<const Tensor*, slots> leaves;
    std::size_t count = 0;
    long passing = 0;  // e's handles of dst's state
    expr::walk_postfix(e, [&]<class X>(const X& x) {
      if constexpr (expr::is_tensor_leaf<X>) {
        std::size_t k = 0;
        while (k < count && leaves[k]->impl_ptr() != x.impl_ptr()) ++k;
        if (k == count) leaves[count++] = &x;
        attrs.add_slot_input(static_cast<int>(k));
        passing += x.impl_ptr() == dst.impl_ptr();
      }
    });
    expr::walk_postfix(e, [&]<class X>(const X& x) {
      if constexpr (expr::is_scalar_leaf<X>) attrs.add_scalar(x.value);
      else if constexpr (is_expr_v<X>)
        if constexpr (expr::reads_attrs<X::op>) attrs.add_step(x.attrs);
    });
    attrs.set_compute(e.info.compute);
    auto emit_on = [&](std::span<const Tensor> inputs, long copied) {
      emit_into(dst, passing + copied, expr::fragment_desc<S>, inputs, std::move(attrs.attrs()), e.info.meta,
                e.info.device, site);
    };
    if (count == 1) return emit_on(std::span<const Tensor>(leaves[0], 1), 0);
    std::array<Tensor, slots> inputs;
    long copied = 0;  // of dst's state, into `inputs`
    for (std::size_t k = 0; k < count; ++k) {
      inputs[k] = *leaves[k];
      copied += inputs[k].impl_ptr() == dst.impl_ptr();
    }
    emit_on(std::span<const Tensor>(inputs.data(), count), copied);
  }
}

template <class E> Tensor commit(const E& e) {
  Tensor t;  // holds no state, so none is rebound
  commit_into(t, e);
  return t;
}

}  // namespace detail

template <class E>
  requires is_expr_v<E>
Tensor& Tensor::operator=(E&& e) {
  detail::commit_into(*this, e);
  return *this;
}

}  // namespace lt
