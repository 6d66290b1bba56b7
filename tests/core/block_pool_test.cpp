// The pool behind IR nodes and tensor handles: blocks come back for reuse, on the thread that
// freed them or, past a batch, on any other; memory stays bounded when one thread makes and
// another frees.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include <lazytensor/core/block_pool.hpp>

namespace {

struct Payload {
  std::int64_t words[9];
};
using Pool = lt::detail::BlockPool<sizeof(Payload), alignof(Payload)>;

TEST(BlockPool, FreedBlocksAreReusedAndDistinctWhileLive) {
  std::vector<void*> first;
  for (int k = 0; k < 1000; ++k) first.push_back(Pool::take());
  std::set<void*> distinct(first.begin(), first.end());
  EXPECT_EQ(distinct.size(), first.size());
  for (void* p : first) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % alignof(Payload), 0u);
  const std::size_t slabs = Pool::slabs();
  for (void* p : first) Pool::give(p);
  std::vector<void*> second;
  for (int k = 0; k < 1000; ++k) second.push_back(Pool::take());
  EXPECT_EQ(Pool::slabs(), slabs) << "a second round of the same size carves nothing new";
  for (void* p : second) Pool::give(p);
}

TEST(BlockPool, OneThreadMakingAndAnotherFreeingStaysBounded) {
  constexpr int rounds = 200, per_round = 2000;
  std::size_t slabs_after_first = 0;
  for (int r = 0; r < rounds; ++r) {
    std::vector<void*> made;
    for (int k = 0; k < per_round; ++k) made.push_back(Pool::take());
    std::thread([&] {
      for (void* p : made) Pool::give(p);
    }).join();
    if (r == 0) slabs_after_first = Pool::slabs();
  }
  // Without handing blocks back, each round would carve per_round blocks anew.
  const std::size_t carved_blocks = (Pool::slabs() - slabs_after_first) * Pool::slab_bytes / sizeof(Payload);
  EXPECT_LT(carved_blocks, std::size_t{4} * per_round);
}

TEST(PoolAllocator, BacksSharedObjects) {
  std::vector<std::shared_ptr<Payload>> objects;
  for (int k = 0; k < 100; ++k) {
    objects.push_back(std::allocate_shared<Payload>(lt::PoolAllocator<Payload>{}));
    objects.back()->words[8] = k;
  }
  for (int k = 0; k < 100; ++k) EXPECT_EQ(objects[static_cast<std::size_t>(k)]->words[8], k);
  std::vector<Payload, lt::PoolAllocator<Payload>> many(50);  // arrays go to the heap
  EXPECT_EQ(many.size(), 50u);
}

}  // namespace
