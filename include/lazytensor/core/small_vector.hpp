#pragma once
// A vector of trivially copyable values that keeps up to N of them in itself: tracing makes
// attributes for every op, and a heap allocation per list would cost more than the rest of
// the op's bookkeeping.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <type_traits>
#include <vector>

namespace lt {

template <class T, std::size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T> && N > 0);

 public:
  using value_type = T;
  using size_type = std::size_t;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() noexcept {}  // user-provided: a const default-constructed one is valid
  SmallVector(std::initializer_list<T> v) { assign(v.begin(), v.end()); }
  template <class It>
    requires(!std::is_integral_v<It>)
  SmallVector(It first, It last) {
    assign(first, last);
  }
  SmallVector(const std::vector<T>& v) { assign(v.begin(), v.end()); }  // NOLINT: a drop-in for vector
  SmallVector(const SmallVector& o) { copy_from(o); }
  SmallVector(SmallVector&& o) noexcept { take(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) copy_from(o);
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      free_heap();
      take(o);
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> v) {
    assign(v.begin(), v.end());
    return *this;
  }
  ~SmallVector() { free_heap(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t capacity() const { return cap_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](std::size_t k) { return data_[k]; }
  const T& operator[](std::size_t k) const { return data_[k]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }

  void reserve(std::size_t n) {
    if (n <= cap_) return;
    auto heap = std::make_unique_for_overwrite<T[]>(n);
    if (size_ > 0) std::memcpy(heap.get(), data_, size_ * sizeof(T));
    free_heap();
    data_ = heap.release();
    cap_ = static_cast<std::uint32_t>(n);
  }
  void clear() { size_ = 0; }
  // The full case out of line: tracing pushes a few words per op, and the inlined fast path
  // is a compare and a store.
  void push_back(const T& v) {
    if (size_ == cap_) [[unlikely]]
      return grow_and_push(v);
    data_[size_++] = v;
  }
  void resize(std::size_t n, T v = T{}) {  // v by value: it may live in this vector
    reserve(n);
    for (std::size_t k = size_; k < n; ++k) data_[k] = v;
    size_ = static_cast<std::uint32_t>(n);
  }
  template <class It>
  void assign(It first, It last) {
    const auto n = static_cast<std::size_t>(std::distance(first, last));
    if (n > cap_) {
      // The source may be this vector's own storage: copy out before the storage changes.
      std::vector<T> copy(first, last);
      clear();
      reserve(n);
      std::copy(copy.begin(), copy.end(), data_);
    } else {
      std::copy(first, last, data_);
    }
    size_ = static_cast<std::uint32_t>(n);
  }
  /// Appends or inserts [first, last) before `pos`.
  template <class It>
  T* insert(const T* pos, It first, It last) {
    const auto at = static_cast<std::size_t>(pos - data_);
    const auto n = static_cast<std::size_t>(std::distance(first, last));
    if (size_ + n > cap_ || reads_own_storage(first, n)) {
      std::vector<T> copy(first, last);  // the values stay put while the storage changes
      reserve(std::max<std::size_t>(size_ + n, 2 * cap_));
      return insert_values(at, copy.begin(), n);
    }
    return insert_values(at, first, n);
  }
  T* insert(const T* pos, std::initializer_list<T> v) { return insert(pos, v.begin(), v.end()); }

  // A loop in place: for a few values, the call to memcmp that std::equal makes costs more.
  // Integers are compared all at once (their differences or-ed together: it vectorises).
  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    if (a.size_ != b.size_) return false;
    if constexpr (std::is_integral_v<T>) {
      T differ = 0;
      for (std::size_t k = 0; k < a.size_; ++k) differ |= a.data_[k] ^ b.data_[k];
      return differ == 0;
    } else {
      for (std::size_t k = 0; k < a.size_; ++k)
        if (!(a.data_[k] == b.data_[k])) return false;
      return true;
    }
  }

 private:
  [[gnu::noinline]] void grow_and_push(T v) {  // v by value: it may live in this vector
    reserve(2 * cap_);
    data_[size_++] = v;
  }
  template <class It>
  T* insert_values(std::size_t at, It first, std::size_t n) {
    std::copy_backward(data_ + at, data_ + size_, data_ + size_ + n);
    std::copy_n(first, n, data_ + at);
    size_ += static_cast<std::uint32_t>(n);
    return data_ + at;
  }
  bool on_heap() const { return data_ != inline_; }
  template <class It> bool reads_own_storage(It first, std::size_t n) const {
    if constexpr (std::contiguous_iterator<It>) {
      const T* p = std::to_address(first);
      return n > 0 && p < data_ + size_ && data_ < p + n;
    } else {
      return false;
    }
  }
  /// A copy of o. A list that fits in place is copied as the whole in-place buffer, a copy of
  /// fixed size that compiles to a few moves (every capacity is at least N).
  void copy_from(const SmallVector& o) {
    if (o.size_ <= N) {
      free_heap();
      std::memcpy(inline_, o.data_, sizeof inline_);
      size_ = o.size_;
      return;
    }
    assign(o.begin(), o.end());
  }
  void free_heap() {
    if (on_heap()) delete[] data_;
    data_ = inline_;
    cap_ = N;
  }
  /// Takes o's values; o is left empty. An o that keeps its values in place still points at
  /// them: only one that hands over its heap array is pointed back (moves are on every op's
  /// tracing path).
  void take(SmallVector& o) {
    if (o.on_heap()) {
      data_ = o.data_;
      cap_ = o.cap_;
      o.data_ = o.inline_;
      o.cap_ = N;
    } else {
      std::memcpy(inline_, o.inline_, sizeof inline_);
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  T* data_ = inline_;
  std::uint32_t size_ = 0;
  std::uint32_t cap_ = N;
  T inline_[N];
};

}  // namespace lt
