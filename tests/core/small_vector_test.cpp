// SmallVector against std::vector: the same values after the same operations, in place and
// on the heap, including operations whose source is the vector itself.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include <lazytensor/core/small_vector.hpp>

namespace lt {
namespace {

template <std::size_t N>
std::vector<std::int64_t> values(const SmallVector<std::int64_t, N>& v) {
  return {v.begin(), v.end()};
}

TEST(SmallVector, GrowsPastItsPlaceAndKeepsItsValues) {
  SmallVector<std::int64_t, 2> v;
  std::vector<std::int64_t> want;
  for (std::int64_t k = 0; k < 100; ++k) {
    v.push_back(k * 3);
    want.push_back(k * 3);
    ASSERT_EQ(values(v), want) << "after " << k + 1 << " values";
  }
  EXPECT_GE(v.capacity(), 100u);
  v.clear();
  EXPECT_TRUE(v.empty());
}

TEST(SmallVector, CopiesAndMovesInPlaceAndOnTheHeap) {
  for (std::int64_t n : {0, 1, 4, 5, 40}) {
    SCOPED_TRACE(n);
    SmallVector<std::int64_t, 4> a;
    for (std::int64_t k = 0; k < n; ++k) a.push_back(k + 1);
    const std::vector<std::int64_t> want = values(a);
    SmallVector<std::int64_t, 4> copy = a;
    EXPECT_EQ(values(copy), want);
    SmallVector<std::int64_t, 4> moved = std::move(copy);
    EXPECT_EQ(values(moved), want);
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
    SmallVector<std::int64_t, 4> big{9, 9, 9, 9, 9, 9, 9};
    big = a;  // from the heap to in place, or heap to heap
    EXPECT_EQ(values(big), want);
    SmallVector<std::int64_t, 4> small{7};
    small = std::move(big);
    EXPECT_EQ(values(small), want);
    EXPECT_TRUE(small == a);
  }
}

TEST(SmallVector, InsertsAndAssignsFromItself) {
  SmallVector<std::int64_t, 8> in_place{1, 2};
  in_place.insert(in_place.begin(), in_place.begin(), in_place.end());
  EXPECT_EQ(values(in_place), (std::vector<std::int64_t>{1, 2, 1, 2}));
  SmallVector<std::int64_t, 4> growing{1, 2, 3};
  growing.insert(growing.end(), growing.begin(), growing.end());
  EXPECT_EQ(values(growing), (std::vector<std::int64_t>{1, 2, 3, 1, 2, 3}));
  growing.insert(growing.begin() + 1, {7, 8});
  EXPECT_EQ(values(growing), (std::vector<std::int64_t>{1, 7, 8, 2, 3, 1, 2, 3}));
  growing.assign(growing.begin() + 1, growing.begin() + 3);
  EXPECT_EQ(values(growing), (std::vector<std::int64_t>{7, 8}));
  growing.resize(5, growing[0]);
  EXPECT_EQ(values(growing), (std::vector<std::int64_t>{7, 8, 7, 7, 7}));
  const std::vector<std::int64_t> from{4, 5, 6, 7, 8, 9};
  SmallVector<std::int64_t, 4> converted = from;
  EXPECT_EQ(values(converted), from);
}

}  // namespace
}  // namespace lt
