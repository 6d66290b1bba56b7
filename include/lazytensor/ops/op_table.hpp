#pragma once
// The op table: every op of the library, one line each. An op's id, its descriptor's
// declaration and its registry entry are made from its line here; an elementwise op's line
// also makes its public faces (free function, method, FixedTensor form, gradient helper).
// Ids never change once given (they enter hashes and persisted plans); a new op takes the
// next free number in its block.

/// Ops whose descriptor is a plain OpDesc, defined beside its kernels in ops/<group>.hpp.
/// X(group, descriptor, id, number)
#define LT_OP_TABLE(X)                                                                                     \
  X(leaf, device_data, device_data, 0) X(leaf, scalar, scalar, 1) X(creation, full, full, 2)               \
  X(creation, arange, arange, 3) X(creation, linspace, linspace, 4) X(creation, eye, eye, 5)               \
  X(creation, rand, rand, 6) X(creation, randn, randn, 7) X(creation, randint, randint, 8)                 \
  X(leaf, cast, cast, 9)                                                                                   \
  X(reduction, sum, sum, 100) X(reduction, mean, mean, 101) X(reduction, prod, prod, 102)                  \
  X(reduction, amax, amax, 103) X(reduction, amin, amin, 104) X(reduction, argmax, argmax, 105)            \
  X(reduction, argmin, argmin, 106) X(reduction, var, var, 107) X(reduction, std_dev, std, 108)            \
  X(reduction, logsumexp, logsumexp, 109) X(reduction, all_true, all, 110) X(reduction, any_true, any, 111) \
  X(movement, reshape, reshape, 130) X(movement, permute, permute, 131) X(movement, expand, expand, 132)    \
  X(movement, slice, slice, 133) X(movement, cat, cat, 134) X(movement, pad, pad, 135)                     \
  X(movement, flip, flip, 136) X(indexing, index_select, index_select, 137)                                \
  X(indexing, gather, gather, 138) X(indexing, scatter_add, scatter_add, 139)                              \
  X(movement, tril, tril, 140) X(movement, triu, triu, 141) X(movement, contiguous, contiguous, 142)        \
  X(contraction, matmul, matmul, 160) X(contraction, conv2d, conv2d, 161)                                  \
  X(pool, max_pool2d, max_pool2d, 162) X(pool, avg_pool2d, avg_pool2d, 163)                                \
  X(pool, adaptive_avg_pool2d, adaptive_avg_pool2d, 164) X(pool, max_pool2d_backward, max_pool2d_backward, 165) \
  X(contraction, conv2d_input_grad, conv2d_input_grad, 166)                                                \
  X(contraction, conv2d_weight_grad, conv2d_weight_grad, 167) X(contraction, attention, attention, 168)    \
  X(collective, all_reduce, all_reduce, 184) X(collective, all_gather, all_gather, 185)                    \
  X(collective, reduce_scatter, reduce_scatter, 186) X(collective, broadcast, broadcast, 187)

/// Elementwise ops of one operand (functors in ops/unary.hpp). X(name, number, Functor,
/// DTypeRule, public face, gradient rule). The gradient rule is a formula, LT_GRAD_X(...)
/// (ops/unary_grad.hpp), or the name of a rule in ops/unary_grad.hpp. Face `plain` makes
/// lt::name(x), x.name(), name(fixed) and grad::name(x); `custom` ops take attributes and have
/// their faces written by hand.
#define LT_UNARY_TABLE(X)                                                                       \
  X(neg, 20, Neg, rules::Promote<false>, plain, grad::rule::neg)                                \
  X(abs, 21, Abs, rules::Promote<>, plain, grad::rule::abs)                                     \
  X(exp, 22, Exp, rules::ToFloat, plain, grad::rule::exp)                                       \
  X(log, 23, Log, rules::ToFloat, plain, grad::rule::log)                                       \
  X(log1p, 24, Log1p, rules::ToFloat, plain, grad::rule::log1p)                                 \
  X(expm1, 25, Expm1, rules::ToFloat, plain, grad::rule::expm1)                                 \
  X(sqrt, 26, Sqrt, rules::ToFloat, plain, grad::rule::sqrt)                                    \
  X(rsqrt, 27, Rsqrt, rules::ToFloat, plain, grad::rule::rsqrt)                                 \
  X(sin, 28, Sin, rules::ToFloat, plain, grad::rule::sin)                                       \
  X(cos, 29, Cos, rules::ToFloat, plain, grad::rule::cos)                                       \
  X(tanh, 30, Tanh, rules::ToFloat, plain, grad::rule::tanh)                                    \
  X(sigmoid, 31, Sigmoid, rules::ToFloat, plain, grad::rule::sigmoid)                           \
  X(relu, 32, Relu, rules::Promote<false>, plain, grad::rule::relu)                             \
  X(gelu, 33, Gelu, rules::ToFloat, custom, grad::rule::gelu)                                   \
  X(silu, 34, Silu, rules::ToFloat, plain, grad::rule::silu)                                    \
  X(softplus, 35, Softplus, rules::ToFloat, custom, grad::rule::softplus)                       \
  X(sign, 36, Sign, rules::Promote<>, plain, grad::rule::sign)                                  \
  X(floor, 37, Floor, rules::Promote<false>, plain, grad::rule::floor)                          \
  X(ceil, 38, Ceil, rules::Promote<false>, plain, grad::rule::ceil)                             \
  X(round, 39, Round, rules::Promote<false>, plain, grad::rule::round)                          \
  X(reciprocal, 40, Reciprocal, rules::ToFloat, plain, grad::rule::reciprocal)                  \
  X(logical_not, 41, LogicalNot, rules::ToBool, plain, not_differentiable)                      \
  X(isnan, 42, IsNan, rules::ToBool, plain, not_differentiable)                                 \
  X(isinf, 43, IsInf, rules::ToBool, plain, not_differentiable)                                 \
  X(erf, 44, Erf, rules::ToFloat, plain, grad::rule::erf)                                       \
  X(clamp, 45, Clamp, rules::Promote<>, custom, grad::rule::clamp)                             \
  X(log2, 46, Log2, rules::ToFloat, plain, LT_GRAD_X(g / (x * std::numbers::ln2)))            \
  X(check_finite, 47, CheckFinite, rules::ToFloat, custom, LT_GRAD_X(g))

/// Elementwise ops of two operands (functors in ops/binary.hpp); columns as LT_UNARY_TABLE's,
/// a formula being LT_GRAD_AB(gradient of a, gradient of b) (ops/binary_grad.hpp).
#define LT_BINARY_TABLE(X)                                                                      \
  X(add, 60, Add, rules::Promote<>, plain, grad::rule::add)                                     \
  X(sub, 61, Sub, NoBoolOperands, plain, grad::rule::sub)                                       \
  X(mul, 62, Mul, rules::Promote<>, plain, grad::rule::mul)                                     \
  X(div, 63, Div, rules::ToFloat, plain, grad::rule::div)                                       \
  X(pow, 64, Pow, rules::Promote<>, plain, grad::rule::pow)                                     \
  X(maximum, 65, Maximum, rules::Promote<>, plain, grad::rule::maximum)                         \
  X(minimum, 66, Minimum, rules::Promote<>, plain, grad::rule::minimum)                         \
  X(fmod, 67, Fmod, IntOrFloat, plain, grad::rule::fmod)                                        \
  X(atan2, 68, Atan2, rules::ToFloat, plain, grad::rule::atan2)                                 \
  X(eq, 69, Eq, rules::ToBool, plain, not_differentiable)                                       \
  X(ne, 70, Ne, rules::ToBool, plain, not_differentiable)                                       \
  X(lt, 71, Lt, rules::ToBool, plain, not_differentiable)                                       \
  X(le, 72, Le, rules::ToBool, plain, not_differentiable)                                       \
  X(gt, 73, Gt, rules::ToBool, plain, not_differentiable)                                       \
  X(ge, 74, Ge, rules::ToBool, plain, not_differentiable)                                       \
  X(logical_and, 75, LogicalAnd, rules::ToBool, plain, not_differentiable)                      \
  X(logical_or, 76, LogicalOr, rules::ToBool, plain, not_differentiable)                        \
  X(hypot, 78, Hypot, rules::ToFloat, plain, LT_GRAD_AB(g * a / y, g * b / y))

/// Elementwise ops of three operands (ops/binary.hpp); columns as LT_UNARY_TABLE's.
#define LT_TERNARY_TABLE(X) X(where, 77, Where, rules::Select, custom, grad::rule::where)
