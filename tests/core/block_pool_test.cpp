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
  const std::size_t bytes = Pool::carved_bytes();
  for (void* p : first) Pool::give(p);
  std::vector<void*> second;
  for (int k = 0; k < 1000; ++k) second.push_back(Pool::take());
  EXPECT_EQ(Pool::carved_bytes(), bytes) << "a second round of the same size carves nothing new";
  for (void* p : second) Pool::give(p);
}

TEST(BlockPool, OneThreadMakingAndAnotherFreeingStaysBounded) {
  constexpr int rounds = 200, per_round = 2000;
  std::size_t bytes_after_first = 0;
  for (int r = 0; r < rounds; ++r) {
    std::vector<void*> made;
    for (int k = 0; k < per_round; ++k) made.push_back(Pool::take());
    std::thread([&] {
      for (void* p : made) Pool::give(p);
    }).join();
    if (r == 0) bytes_after_first = Pool::carved_bytes();
  }
  // Without handing blocks back, each round would carve per_round blocks anew.
  const std::size_t carved_blocks = (Pool::carved_bytes() - bytes_after_first) / sizeof(Payload);
  EXPECT_LT(carved_blocks, std::size_t{4} * per_round);
}

TEST(BlockPool, ALargePoolCarvesHugeSlabsOfDistinctAlignedBlocks) {
  // Blocks of another size: a pool of its own, which grows past its ordinary slabs here.
  struct Big {
    std::int64_t words[13];
  };
  using BigPool = lt::detail::BlockPool<sizeof(Big), alignof(Big)>;
  constexpr std::size_t count = 200000;  // 20.8 MB: ordinary slabs, then huge ones
  std::vector<void*> blocks;
  blocks.reserve(count);
  for (std::size_t k = 0; k < count; ++k) {
    blocks.push_back(BigPool::take());
    static_cast<Big*>(blocks.back())->words[12] = static_cast<std::int64_t>(k);  // every byte is usable
  }
  std::vector<void*> sorted = blocks;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "a block handed out twice";
  for (std::size_t k = 1; k < sorted.size(); ++k)
    ASSERT_GE(static_cast<std::byte*>(sorted[k]) - static_cast<std::byte*>(sorted[k - 1]), static_cast<std::ptrdiff_t>(sizeof(Big)))
        << "overlapping blocks";
  std::size_t misaligned = 0;
  for (void* p : blocks) misaligned += reinterpret_cast<std::uintptr_t>(p) % alignof(Big) != 0;
  EXPECT_EQ(misaligned, 0u);
  std::size_t overwritten = 0;
  for (std::size_t k = 0; k < count; ++k) overwritten += static_cast<Big*>(blocks[k])->words[12] != static_cast<std::int64_t>(k);
  EXPECT_EQ(overwritten, 0u);
  // At most one slab of slack: 2 MiB.
  EXPECT_GE(BigPool::carved_bytes(), count * sizeof(Big));
  EXPECT_LE(BigPool::carved_bytes(), count * sizeof(Big) + (std::size_t{2} << 20));
  for (void* p : blocks) BigPool::give(p);
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
