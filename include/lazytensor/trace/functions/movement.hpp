#pragma once
// Movement functions: views, concatenation, padding and indexing.
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "lazytensor/ops/kernels/strided.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/op_attrs.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt {

namespace detail {
inline Attrs dims_attrs(const Dims& d) { return encode(DimsAttrs{d.span()}); }

/// wrap_dim, failing with the op and its operands named.
inline int wrap_dim_of(std::string_view op, std::span<const Tensor> operands, std::int64_t dim, int rank) {
  try {
    return wrap_dim(dim, rank);
  } catch (const Error& e) {
    op_error(op, operands, e.what());
  }
}

/// A shape with `extent` inserted at `pos`, failing with the op named past the maximum rank.
inline Shape with_inserted(std::string_view op, const Tensor& x, Shape s, int pos, std::int64_t extent) {
  try {
    s.insert(pos, extent);
  } catch (const Error& e) {
    op_error(op, {&x, 1}, e.what());
  }
  return s;
}
}  // namespace detail

/// `shape` may hold one -1, inferred from the number of elements.
inline Tensor reshape(const Tensor& x, Shape shape, Site site = Site::current()) {
  RecordingSite at(site);
  int infer_at = -1;
  std::int64_t known = 1;
  for (int k = 0; k < shape.rank(); ++k) {
    if (shape[k] == -1) {
      if (infer_at >= 0) op_error("reshape", {&x, 1}, "only one extent may be -1, got " + shape.str());
      infer_at = k;
    } else {
      known *= shape[k];
    }
  }
  if (infer_at >= 0) {
    if (known == 0 || x.numel() % known != 0)
      op_error("reshape", {&x, 1}, "cannot infer the -1 extent of " + shape.str());
    shape[infer_at] = x.numel() / known;
  }
  return record(movement::reshape, {x}, detail::dims_attrs(shape));
}

/// As reshape: on a lazy device every value can be viewed.
inline Tensor view(const Tensor& x, Shape shape, Site site = Site::current()) {
  RecordingSite at(site);
  return reshape(x, shape);
}

inline Tensor permute(const Tensor& x, Dims dims, Site site = Site::current()) {
  RecordingSite at(site);
  for (auto& d : dims) {
    if (d < -x.dim() || d >= std::max(x.dim(), 1)) op_error("permute", {&x, 1}, "dim " + std::to_string(d) + " is out of range");
    d = d < 0 ? d + x.dim() : d;
  }
  return record(movement::permute, {x}, detail::dims_attrs(dims));
}

inline Tensor transpose(const Tensor& x, std::int64_t dim0, std::int64_t dim1, Site site = Site::current()) {
  RecordingSite at(site);
  Dims perm = Dims::filled(x.dim(), 0);
  std::iota(perm.begin(), perm.end(), 0);
  try {
    const int d0 = wrap_dim(dim0, x.dim()), d1 = wrap_dim(dim1, x.dim());  // rank 0 takes -1 and 0, as PyTorch
    if (x.dim() == 0) return x;
    std::swap(perm[d0], perm[d1]);
  } catch (const Error& e) {
    op_error("transpose", {&x, 1}, e.what());
  }
  return record(movement::permute, {x}, detail::dims_attrs(perm));
}

/// `shape` may use -1 to keep an extent; new leading dims are added as in broadcasting.
inline Tensor expand(const Tensor& x, Shape shape, Site site = Site::current()) {
  RecordingSite at(site);
  int lead = shape.rank() - x.dim();
  for (int k = 0; k < shape.rank(); ++k)
    if (shape[k] == -1) {
      if (k < lead) op_error("expand", {&x, 1}, "-1 is not allowed for the new leading dim " + std::to_string(k));
      shape[k] = x.shape()[k - lead];
    }
  return record(movement::expand, {x}, detail::dims_attrs(shape));
}

/// Elements start, start+step, ... below end of `dim`. Negative start and end count from the
/// end; both are clamped to the dim, as in Python slicing.
inline Tensor slice(const Tensor& x, std::int64_t dim, std::optional<std::int64_t> start,
                    std::optional<std::int64_t> end, std::int64_t step = 1, Site site = Site::current()) {
  RecordingSite at(site);
  if (x.dim() == 0) op_error("slice", {&x, 1}, "cannot slice a zero-dim tensor");
  int d;
  try {
    d = wrap_dim(dim, x.dim());
  } catch (const Error& e) {
    op_error("slice", {&x, 1}, e.what());
  }
  if (step <= 0) op_error("slice", {&x, 1}, "step must be positive, got " + std::to_string(step));
  std::int64_t n = x.shape()[d];
  auto clamp_index = [n](std::int64_t i) { return std::clamp(i < 0 ? i + n : i, std::int64_t{0}, n); };
  std::int64_t s = clamp_index(start.value_or(0)), e = clamp_index(end.value_or(n));
  return record(movement::slice, {x}, encode(SliceAttrs{d, s, std::max(s, e), step}));
}

/// Removes every dim of extent 1.
inline Tensor squeeze(const Tensor& x, Site site = Site::current()) {
  RecordingSite at(site);
  Shape s;
  for (std::int64_t e : x.shape())
    if (e != 1) s.push_back(e);
  return reshape(x, s);
}

/// Removes `dim` when its extent is 1; otherwise the shape stays as it is.
inline Tensor squeeze(const Tensor& x, std::int64_t dim, Site site = Site::current()) {
  RecordingSite at(site);
  int d = detail::wrap_dim_of("squeeze", {&x, 1}, dim, x.dim());
  Shape s = x.shape();
  if (x.dim() > 0 && s[d] == 1) s.erase(d);
  return reshape(x, s);
}

/// Inserts a dim of extent 1 at `dim`, in [-rank - 1, rank].
inline Tensor unsqueeze(const Tensor& x, std::int64_t dim, Site site = Site::current()) {
  RecordingSite at(site);
  int d = detail::wrap_dim_of("unsqueeze", {&x, 1}, dim, x.dim() + 1);
  return reshape(x, detail::with_inserted("unsqueeze", x, x.shape(), d, 1));
}

/// Merges dims start_dim..end_dim into one; a zero-dim tensor becomes [1].
inline Tensor flatten(const Tensor& x, std::int64_t start_dim = 0, std::int64_t end_dim = -1,
                      Site site = Site::current()) {
  RecordingSite at(site);
  int s = detail::wrap_dim_of("flatten", {&x, 1}, start_dim, x.dim());
  int e = detail::wrap_dim_of("flatten", {&x, 1}, end_dim, x.dim());
  if (s > e) op_error("flatten", {&x, 1}, "start_dim cannot come after end_dim");
  if (x.dim() == 0) return reshape(x, Shape{1});
  Shape out;
  for (int k = 0; k < x.dim(); ++k) {
    if (k <= s || k > e) out.push_back(x.shape()[k]);
    else out[out.rank() - 1] *= x.shape()[k];
  }
  return reshape(x, out);
}

/// Elements start..start+length of `dim`; a negative start counts from the end.
inline Tensor narrow(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t length,
                     Site site = Site::current()) {
  RecordingSite at(site);
  if (x.dim() == 0) op_error("narrow", {&x, 1}, "cannot narrow a zero-dim tensor");
  int d = detail::wrap_dim_of("narrow", {&x, 1}, dim, x.dim());
  std::int64_t n = x.shape()[d];
  if (start < -n || start > n)
    op_error("narrow", {&x, 1}, detail::concat("start ", start, " is out of range for dim ", d, " of size ", n));
  if (start < 0) start += n;
  if (length < 0 || start + length > n)
    op_error("narrow", {&x, 1}, detail::concat("length ", length, " from ", start, " exceeds dim ", d, " of size ", n));
  return slice(x, d, start, start + length);
}

/// The slice at `index` of `dim` (negative counts from the end), without that dim.
inline Tensor select(const Tensor& x, std::int64_t dim, std::int64_t index, Site site = Site::current()) {
  RecordingSite at(site);
  if (x.dim() == 0) op_error("select", {&x, 1}, "cannot select from a zero-dim tensor");
  int d = detail::wrap_dim_of("select", {&x, 1}, dim, x.dim());
  std::int64_t n = x.shape()[d];
  if (index < -n || index >= n)
    op_error("select", {&x, 1}, detail::concat("index ", index, " is out of range for dim ", d, " of size ", n));
  if (index < 0) index += n;
  Shape s = x.shape();
  s.erase(d);
  return reshape(slice(x, d, index, index + 1), s);
}

/// Reverses the order of elements along each of `dims`.
inline Tensor flip(const Tensor& x, Dims dims, Site site = Site::current()) {
  RecordingSite at(site);
  for (auto& d : dims) d = detail::wrap_dim_of("flip", {&x, 1}, d, x.dim());
  return record(movement::flip, {x}, detail::dims_attrs(dims));
}

/// Concatenation along `dim`; dtypes promote. Tensors of shape [0] are skipped, as PyTorch
/// does, and `dim` wraps against the rank of the first other tensor.
inline Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim = 0, Site site = Site::current()) {
  RecordingSite at(site);
  if (tensors.empty()) op_error("cat", tensors, "expected a non-empty list of tensors");
  int rank = 1;
  for (const Tensor& t : tensors)
    if (t.defined() && !is_legacy_empty(t.shape())) {
      rank = t.dim();
      break;
    }
  int d = detail::wrap_dim_of("cat", tensors, dim, rank);
  return record(movement::cat, tensors, encode(DimAttrs{d}));
}

/// Stacks equally shaped tensors along a new dim `dim`, in [-rank - 1, rank].
inline Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim = 0, Site site = Site::current()) {
  RecordingSite at(site);
  if (tensors.empty()) op_error("stack", tensors, "expected a non-empty list of tensors");
  for (const Tensor& t : tensors)
    if (!t.defined()) op_error("stack", tensors, "an operand is undefined");
  for (std::size_t k = 1; k < tensors.size(); ++k)
    if (tensors[k].shape() != tensors[0].shape())
      op_error("stack", tensors, detail::concat("tensors must have one shape, got ", tensors[0].shape(), " and ",
                                                tensors[k].shape(), " (at position ", k, ")"));
  int d = detail::wrap_dim_of("stack", tensors, dim, tensors[0].dim() + 1);
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) parts.push_back(unsqueeze(t, d));
  return cat(parts, d);
}

/// Constant padding. `pads` holds (before, after) pairs from the last dim backwards, as in
/// torch.nn.functional.pad; negative amounts crop.
inline Tensor pad(const Tensor& x, const std::vector<std::int64_t>& pads, double value = 0.0,
                  Site site = Site::current()) {
  RecordingSite at(site);
  return record(movement::pad, {x}, encode(PadAttrs{pads, value}));
}

/// Zeroes the elements above diagonal `diagonal` of the last two dims.
inline Tensor tril(const Tensor& x, std::int64_t diagonal = 0, Site site = Site::current()) {
  RecordingSite at(site);
  return record(movement::tril, {x}, encode(TriangleAttrs{diagonal}));
}
/// Zeroes the elements below diagonal `diagonal` of the last two dims.
inline Tensor triu(const Tensor& x, std::int64_t diagonal = 0, Site site = Site::current()) {
  RecordingSite at(site);
  return record(movement::triu, {x}, encode(TriangleAttrs{diagonal}));
}

inline Tensor contiguous(const Tensor& x, Site site = Site::current()) {
  RecordingSite at(site);
  return record(movement::contiguous, {x});
}

/// Pieces of `split_size` along `dim`; the last may be smaller.
inline std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim = 0,
                                 Site site = Site::current()) {
  RecordingSite at(site);
  if (x.dim() == 0) op_error("split", {&x, 1}, "cannot split a zero-dim tensor");
  int d = detail::wrap_dim_of("split", {&x, 1}, dim, x.dim());
  std::int64_t n = x.shape()[d];
  if (split_size < 0 || (split_size == 0 && n > 0))
    op_error("split", {&x, 1}, detail::concat("split_size ", split_size, " cannot split dim ", d, " of size ", n));
  std::int64_t pieces = split_size == 0 ? 1 : std::max<std::int64_t>((n + split_size - 1) / split_size, 1);
  std::vector<Tensor> out;
  out.reserve(static_cast<std::size_t>(pieces));
  for (std::int64_t k = 0; k < pieces; ++k)
    out.push_back(slice(x, d, k * split_size, std::min(n, (k + 1) * split_size)));
  return out;
}

/// At most `chunks` pieces of equal size along `dim` (torch.chunk: the last may be smaller,
/// and there may be fewer pieces); an empty dim gives `chunks` empty pieces.
inline std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim = 0,
                                 Site site = Site::current()) {
  RecordingSite at(site);
  if (chunks <= 0) op_error("chunk", {&x, 1}, detail::concat("chunks must be positive, got ", chunks));
  if (x.dim() == 0) op_error("chunk", {&x, 1}, "cannot chunk a zero-dim tensor");
  int d = detail::wrap_dim_of("chunk", {&x, 1}, dim, x.dim());
  std::int64_t n = x.shape()[d];
  if (n > 0) return split(x, (n + chunks - 1) / chunks, d);
  std::vector<Tensor> out;
  for (std::int64_t k = 0; k < chunks; ++k) out.push_back(slice(x, d, 0, 0));
  return out;
}

namespace detail {
inline bool is_index_dtype(DType t) { return t == DType::i32 || t == DType::i64; }
}  // namespace detail

/// Slices of `dim` at the positions in `index` (i32 or i64, rank 0 or 1), in that order.
inline Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index, Site site = Site::current()) {
  RecordingSite at(site);
  const Tensor operands[] = {x, index};
  int d = x.defined() ? detail::wrap_dim_of("index_select", operands, dim, x.dim()) : 0;
  return record(indexing::index_select, operands, encode(DimAttrs{d}));
}

/// out[...i...] = x[...index[...i...]...] with the index replacing the coordinate of `dim`.
inline Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index, Site site = Site::current()) {
  RecordingSite at(site);
  const Tensor operands[] = {x, index};
  int d = x.defined() ? detail::wrap_dim_of("gather", operands, dim, x.dim()) : 0;
  return record(indexing::gather, operands, encode(DimAttrs{d}));
}

/// x with src[...i...] added at x[...index[...i...]...]; duplicates add up in index order.
inline Tensor scatter_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src,
                          Site site = Site::current()) {
  RecordingSite at(site);
  const Tensor operands[] = {x, index, src};
  int d = x.defined() ? detail::wrap_dim_of("scatter_add", operands, dim, x.dim()) : 0;
  return record(indexing::scatter_add, operands, encode(DimAttrs{d}));
}

/// Rows of `weight` ([num_embeddings, embedding_dim]) at `indices`: indices.shape + [embedding_dim].
inline Tensor embedding(const Tensor& weight, const Tensor& indices, Site site = Site::current()) {
  RecordingSite at(site);
  const Tensor operands[] = {weight, indices};
  if (!weight.defined() || !indices.defined()) op_error("embedding", operands, "an operand is undefined");
  if (weight.dim() != 2) op_error("embedding", operands, "weight must have rank 2");
  if (!detail::is_index_dtype(indices.dtype())) op_error("embedding", operands, "indices must be i32 or i64");
  Shape out = detail::with_inserted("embedding", indices, indices.shape(), indices.dim(), weight.shape()[1]);
  return reshape(index_select(weight, 0, reshape(indices, Shape{-1})), out);
}

/// i64 one-hot vectors: indices.shape + [num_classes]. num_classes -1 means max + 1, which
/// needs the values: only on the eager device (a lazy one would have to run the step).
inline Tensor one_hot(const Tensor& indices, std::int64_t num_classes = -1, Site site = Site::current()) {
  RecordingSite at(site);
  const std::span<const Tensor> operand(&indices, 1);
  if (!indices.defined()) op_error("one_hot", operand, "an operand is undefined");
  if (!detail::is_index_dtype(indices.dtype())) op_error("one_hot", operand, "indices must be i32 or i64");
  if (num_classes != -1 && num_classes <= 0)
    op_error("one_hot", operand, detail::concat("num_classes must be positive or -1, got ", num_classes));
  if (!indices.device().is_lazy()) {
    const View& v = indices.impl().data.view;
    std::vector<std::int64_t> values(static_cast<std::size_t>(v.numel()));
    kernels::load_chunk<std::int64_t>(kernels::Operand(v, v.shape), v.shape, 0, v.numel(), values.data());
    if (num_classes == -1 && values.empty())
      op_error("one_hot", operand, "cannot infer num_classes from an empty tensor");
    for (std::int64_t c : values)
      if (c < 0 || (num_classes != -1 && c >= num_classes))
        op_error("one_hot", operand,
                 detail::concat("class value ", c, " is out of range for ", num_classes, " classes"));
    if (num_classes == -1) num_classes = *std::max_element(values.begin(), values.end()) + 1;
  } else if (num_classes == -1) {
    op_error("one_hot", operand, "num_classes must be given on a lazy device");
  }
  // Scatter a 1 per index into zeros along the new last dim.
  Shape out = detail::with_inserted("one_hot", indices, indices.shape(), indices.dim(), num_classes);
  Shape ones_shape = indices.shape();
  ones_shape.push_back(1);
  Tensor zeros = expand(scalar_tensor(std::int64_t{0}, indices.device()), out);
  Tensor ones = expand(scalar_tensor(std::int64_t{1}, indices.device()), ones_shape);
  return scatter_add(zeros, -1, unsqueeze(indices, -1), ones);
}

inline Tensor Tensor::reshape(Shape shape, Site site) const { return lt::reshape(*this, shape, site); }
inline Tensor Tensor::view(Shape shape, Site site) const { return lt::view(*this, shape, site); }
inline Tensor Tensor::permute(Dims dims, Site site) const { return lt::permute(*this, dims, site); }
inline Tensor Tensor::transpose(std::int64_t d0, std::int64_t d1, Site site) const {
  return lt::transpose(*this, d0, d1, site);
}
inline Tensor Tensor::t(Site site) const {
  RecordingSite at(site);
  if (dim() > 2) op_error("t", {this, 1}, "expects a tensor of rank at most 2");
  return lt::transpose(*this, 0, -1);
}
inline Tensor Tensor::expand(Shape shape, Site site) const { return lt::expand(*this, shape, site); }
inline Tensor Tensor::slice(std::int64_t dim, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                            std::int64_t step, Site site) const {
  return lt::slice(*this, dim, start, end, step, site);
}
inline Tensor Tensor::squeeze(Site site) const { return lt::squeeze(*this, site); }
inline Tensor Tensor::squeeze(std::int64_t dim, Site site) const { return lt::squeeze(*this, dim, site); }
inline Tensor Tensor::unsqueeze(std::int64_t dim, Site site) const { return lt::unsqueeze(*this, dim, site); }
inline Tensor Tensor::flatten(std::int64_t start_dim, std::int64_t end_dim, Site site) const {
  return lt::flatten(*this, start_dim, end_dim, site);
}
inline Tensor Tensor::narrow(std::int64_t dim, std::int64_t start, std::int64_t length, Site site) const {
  return lt::narrow(*this, dim, start, length, site);
}
inline Tensor Tensor::select(std::int64_t dim, std::int64_t index, Site site) const {
  return lt::select(*this, dim, index, site);
}
inline Tensor Tensor::flip(Dims dims, Site site) const { return lt::flip(*this, dims, site); }
inline Tensor Tensor::index_select(std::int64_t dim, const Tensor& index, Site site) const {
  return lt::index_select(*this, dim, index, site);
}
inline Tensor Tensor::gather(std::int64_t dim, const Tensor& index, Site site) const {
  return lt::gather(*this, dim, index, site);
}
inline Tensor Tensor::scatter_add(std::int64_t dim, const Tensor& index, const Tensor& src, Site site) const {
  return lt::scatter_add(*this, dim, index, src, site);
}
inline Tensor Tensor::tril(std::int64_t diagonal, Site site) const { return lt::tril(*this, diagonal, site); }
inline Tensor Tensor::triu(std::int64_t diagonal, Site site) const { return lt::triu(*this, diagonal, site); }
inline Tensor Tensor::contiguous(Site site) const { return lt::contiguous(*this, site); }
inline std::vector<Tensor> Tensor::split(std::int64_t split_size, std::int64_t dim, Site site) const {
  return lt::split(*this, split_size, dim, site);
}
inline std::vector<Tensor> Tensor::chunk(std::int64_t chunks, std::int64_t dim, Site site) const {
  return lt::chunk(*this, chunks, dim, site);
}

}  // namespace lt
