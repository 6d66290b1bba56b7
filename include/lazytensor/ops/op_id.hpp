#pragma once
// Stable op ids: the registry line of each op. Numbers never change once given (they enter
// hashes and persisted plans); a new op takes the next free number in its block.
#include <cstdint>

namespace lt {

enum class OpId : std::uint16_t {
  // leaves and creation
  device_data = 0, scalar = 1, full = 2, arange = 3, linspace = 4, eye = 5,
  rand = 6, randn = 7, randint = 8, cast = 9,
  // unary elementwise
  neg = 20, abs = 21, exp = 22, log = 23, log1p = 24, expm1 = 25, sqrt = 26, rsqrt = 27,
  sin = 28, cos = 29, tanh = 30, sigmoid = 31, relu = 32, gelu = 33, silu = 34, softplus = 35,
  sign = 36, floor = 37, ceil = 38, round = 39, reciprocal = 40, logical_not = 41, isnan = 42,
  isinf = 43, erf = 44, clamp = 45,
  // binary and ternary elementwise
  add = 60, sub = 61, mul = 62, div = 63, pow = 64, maximum = 65, minimum = 66, fmod = 67,
  atan2 = 68, eq = 69, ne = 70, lt = 71, le = 72, gt = 73, ge = 74, logical_and = 75,
  logical_or = 76, where = 77,
  // reductions
  sum = 100, mean = 101, prod = 102, amax = 103, amin = 104, argmax = 105, argmin = 106,
  var = 107, std = 108, logsumexp = 109, all = 110, any = 111,
  // movement
  reshape = 130, permute = 131, expand = 132, slice = 133, cat = 134, pad = 135, flip = 136,
  index_select = 137, gather = 138, scatter_add = 139, tril = 140, triu = 141, contiguous = 142,
  // contractions and windows
  matmul = 160, conv2d = 161, max_pool2d = 162, avg_pool2d = 163, adaptive_avg_pool2d = 164,
  max_pool2d_backward = 165, conv2d_input_grad = 166, conv2d_weight_grad = 167,
  // fused elementwise expressions (one id for all; the body tells them apart)
  fragment = 180,
};

/// One past the largest id: the size of per-op tables.
inline constexpr std::size_t op_id_limit = 192;

}  // namespace lt
