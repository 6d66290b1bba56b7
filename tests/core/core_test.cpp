// Core types: shapes and strides, broadcasting, dim wrapping, dtypes, aligned buffers, devices.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include <cstdint>

#include <lazytensor/lazytensor.hpp>

namespace lt {
namespace {

TEST(Shape, RankNumelAndText) {
  Shape s{2, 3, 4};
  EXPECT_EQ(s.rank(), 3);
  EXPECT_EQ(s.numel(), 24);
  EXPECT_EQ(s.str(), "[2, 3, 4]");
  EXPECT_EQ(Shape{}.numel(), 1);  // rank 0 holds one element
  EXPECT_EQ((Shape{0, 5}).numel(), 0);
}

TEST(Shape, RankAboveEightIsAnError) {
  EXPECT_THROW((Shape{1, 1, 1, 1, 1, 1, 1, 1, 1}), Error);
  Shape s = Dims::filled(8, 1);
  EXPECT_THROW(s.push_back(1), Error);
}

TEST(Shape, ContiguousStrides) {
  EXPECT_EQ(contiguous_strides(Shape{2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_EQ(contiguous_strides(Shape{}), Strides{});
  EXPECT_TRUE(is_contiguous(Shape{2, 3}, Strides{3, 1}));
  EXPECT_FALSE(is_contiguous(Shape{2, 3}, Strides{1, 2}));
  EXPECT_TRUE(is_contiguous(Shape{1, 3}, Strides{99, 1}));  // a size-1 dim's stride is free
}

TEST(Shape, Broadcasting) {
  Shape out;
  ASSERT_TRUE(try_broadcast(Shape{3, 1}, Shape{1, 4}, out));
  EXPECT_EQ(out, (Shape{3, 4}));
  ASSERT_TRUE(try_broadcast(Shape{2, 3, 4}, Shape{4}, out));
  EXPECT_EQ(out, (Shape{2, 3, 4}));
  ASSERT_TRUE(try_broadcast(Shape{}, Shape{5}, out));
  EXPECT_EQ(out, Shape{5});
  ASSERT_TRUE(try_broadcast(Shape{0, 1}, Shape{1, 3}, out));
  EXPECT_EQ(out, (Shape{0, 3}));
  EXPECT_FALSE(try_broadcast(Shape{2, 3}, Shape{4}, out));
  EXPECT_EQ(broadcast_strides(Shape{3, 1}, Strides{1, 1}, Shape{2, 3, 4}), (Strides{0, 1, 0}));
}

TEST(Shape, WrapDim) {
  EXPECT_EQ(wrap_dim(-1, 3), 2);
  EXPECT_EQ(wrap_dim(0, 0), 0);
  EXPECT_EQ(wrap_dim(-1, 0), 0);
  EXPECT_THROW(wrap_dim(3, 3), Error);
  EXPECT_THROW(wrap_dim(-4, 3), Error);
}

TEST(DType, SizesNamesAndPromotion) {
  EXPECT_EQ(itemsize(f32), 4u);
  EXPECT_EQ(itemsize(f64), 8u);
  EXPECT_EQ(itemsize(i32), 4u);
  EXPECT_EQ(itemsize(i64), 8u);
  EXPECT_EQ(itemsize(boolean), 1u);
  EXPECT_EQ(itemsize(bf16), 2u);
  EXPECT_EQ(name(boolean), "bool");
  EXPECT_EQ(promote_types(i32, f32), f32);
  EXPECT_EQ(promote_types(boolean, i32), i32);
  EXPECT_EQ(promote_types(i64, f32), f32);
  EXPECT_EQ(promote_types(f32, f64), f64);
  EXPECT_EQ(promote_types(bf16, f32), f32);
  EXPECT_EQ(promote_types(bf16, i64), bf16);
  EXPECT_THROW(visit(bf16, [](auto) {}), Error);
}

// torch.promote_types over every pair of lazytensor's dtypes, written out by hand from
// PyTorch's promotion table (c10/core/ScalarType.cpp): the table-driven rule must give each.
TEST(DType, PromotionOfEveryPairIsPyTorchs) {
  const DType order[] = {boolean, i32, i64, f32, f64, bf16, f16};
  const DType expected[7][7] = {
      //           bool     i32   i64   f32  f64  bf16  f16
      /* bool */ {boolean, i32, i64, f32, f64, bf16, f16},
      /* i32  */ {i32, i32, i64, f32, f64, bf16, f16},
      /* i64  */ {i64, i64, i64, f32, f64, bf16, f16},
      /* f32  */ {f32, f32, f32, f32, f64, f32, f32},
      /* f64  */ {f64, f64, f64, f64, f64, f64, f64},
      /* bf16 */ {bf16, bf16, bf16, f32, f64, bf16, f32},
      /* f16  */ {f16, f16, f16, f32, f64, f32, f16},
  };
  for (std::size_t a = 0; a < 7; ++a)
    for (std::size_t b = 0; b < 7; ++b)
      EXPECT_EQ(promote_types(order[a], order[b]), expected[a][b]) << name(order[a]) << " and " << name(order[b]);
}

TEST(DType, TheTableDescribesEveryDtypeOnce) {
  ASSERT_EQ(dtype_count, 7u);
  for (const DTypeInfo& d : dtype_table) {
    EXPECT_TRUE(is_dtype(d.dtype));
    EXPECT_EQ(itemsize(d.dtype), d.size);
    EXPECT_EQ(is_low_precision(d.dtype), d.dtype == bf16 || d.dtype == f16) << d.name;
    EXPECT_EQ(dtype_info(d.compute).compute, d.compute) << d.name << " computes in a dtype that computes in itself";
  }
  EXPECT_FALSE(is_dtype(static_cast<DType>(dtype_count)));
  EXPECT_EQ(name(static_cast<DType>(200)), "?");
  EXPECT_EQ(itemsize(static_cast<DType>(200)), 0u);
  EXPECT_EQ(name(f16), "f16");
  EXPECT_EQ(itemsize(f16), 2u);
}

// The predicates read a packed copy of the table with an entry for every byte: it agrees with
// the table, and a byte that is no dtype has no size and no category but boolean.
TEST(DType, PredicatesAgreeWithTheTableForEveryByte) {
  for (int v = 0; v < 256; ++v) {
    const auto t = static_cast<DType>(v);
    if (!is_dtype(t)) {
      EXPECT_EQ(itemsize(t), 0u) << v;
      EXPECT_EQ(category(t), DTypeCategory::boolean) << v;
      EXPECT_FALSE(is_floating(t) || is_integral(t) || is_low_precision(t)) << v;
      continue;
    }
    const DTypeInfo& d = dtype_info(t);
    EXPECT_EQ(itemsize(t), d.size) << d.name;
    EXPECT_EQ(category(t), d.category) << d.name;
    EXPECT_EQ(is_floating(t), d.category == DTypeCategory::floating) << d.name;
    EXPECT_EQ(is_integral(t), d.category == DTypeCategory::integral) << d.name;
    EXPECT_EQ(is_low_precision(t), d.compute != t) << d.name;
  }
}

// float16 against the format's definition: every pattern widens to its value; f32 values
// round to nearest even (ties, subnormals, overflow past 65504, NaNs kept quiet).
TEST(Float16, ConvertsAsTheFormatDefines) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const int e = static_cast<int>(h >> 10 & 0x1f), f = static_cast<int>(h & 0x3ff);
    const float v = static_cast<float>(float16::from_bits(static_cast<std::uint16_t>(h)));
    const double sign = (h & 0x8000) != 0 ? -1 : 1;
    if (e == 31 && f != 0) {
      EXPECT_TRUE(std::isnan(v)) << h;
      continue;
    }
    const double want = e == 31 ? sign * INFINITY : e == 0 ? sign * std::ldexp(f, -24) : sign * std::ldexp(1024 + f, e - 25);
    ASSERT_EQ(static_cast<double>(v), want) << h;
    if (e < 31) {
      ASSERT_EQ(float16(v).bits, h) << "a value rounds to itself";
      if (e < 30 || f < 1023) {  // halfway to the next pattern up: to the even one of the two
        const double up = sign * (e == 0 ? std::ldexp(f + 1, -24) : std::ldexp(1024 + f + 1, e - 25));
        const auto tie = static_cast<float>((want + up) / 2);
        ASSERT_EQ(float16(tie).bits, (h & 1) == 0 ? h : h + 1) << h;
        ASSERT_EQ(float16(std::nextafter(tie, static_cast<float>(want))).bits, h) << h;
      }
    }
  }
  EXPECT_EQ(float16(65519.996f).bits, 0x7bff);
  EXPECT_EQ(float16(65520.0f).bits, 0x7c00);
  EXPECT_EQ(float16(-1e9f).bits, 0xfc00);
  EXPECT_EQ(float16(std::ldexp(1.0f, -25)).bits, 0x0000) << "half the smallest subnormal ties to zero";
  EXPECT_EQ(float16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)).bits, 0x0001);
  EXPECT_EQ(float16(std::bit_cast<float>(0x7f800001u)).bits & 0x7e00, 0x7e00) << "a signalling NaN comes back quiet";
  EXPECT_EQ(float16(bfloat16(3.0f)).bits, 0x4200);
  EXPECT_EQ(static_cast<float>(static_cast<bfloat16>(float16(1.5f))), 1.5f);
}

TEST(Buffer, SixtyFourByteAligned) {
  for (std::size_t bytes : {1u, 3u, 64u, 1000u, 1u << 20}) {
    Buffer b(bytes);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % 64, 0u) << bytes;
    EXPECT_EQ(b.bytes(), bytes);
  }
  Buffer z = Buffer::zeroed(128);
  for (std::size_t k = 0; k < 128; ++k) EXPECT_EQ(z.data()[k], std::byte{0});
}

TEST(Buffer, LargeBlocksStartOnAHugePageBoundary) {
  // Sizes at the threshold and past it, uneven ones included, each freed and taken again.
  for (std::size_t bytes : {detail::huge_block_bytes, detail::huge_block_bytes + 100, std::size_t{9} << 20}) {
    for (int round = 0; round < 2; ++round) {
      Buffer b(bytes);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % detail::huge_page_bytes, 0u) << bytes;
      b.data()[bytes - 1] = std::byte{1};  // the whole block is usable
    }
  }
  Buffer below(detail::huge_block_bytes - 64);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(below.data()) % buffer_alignment, 0u);
}

TEST(Device, NamesAndEquality) {
  EXPECT_EQ(device().str(), "lazy:0");
  EXPECT_EQ(cpu.str(), "cpu");
  EXPECT_EQ(lazy(3).str(), "lazy:3");
  EXPECT_TRUE(device().is_lazy());
  EXPECT_FALSE(cpu.is_lazy());
  EXPECT_NE(lazy(0), lazy(1));
}

TEST(Error, CheckMacroBuildsTheMessage) {
  try {
    LT_CHECK(1 + 1 == 3, "op: ", 42, " and ", Shape{2, 3});
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "op: 42 and [2, 3]");
  }
}

TEST(Hash, CombineDependsOnOrderAndValue) {
  hash_t a = hash_combine(hash_combine(0, 1), 2), b = hash_combine(hash_combine(0, 2), 1);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, hash_combine(hash_combine(0, 1), 2));
}

TEST(Buffer, AFreedLargeBlockIsReusedForTheSameSize) {
  const std::size_t bytes = 3 << 20;
  std::byte* first = nullptr;
  {
    Buffer b(bytes);
    first = b.data();
    b.data()[0] = std::byte{7};
  }
  EXPECT_GE(detail::BlockCache::instance().cached_bytes(), bytes);
  Buffer again(bytes);
  EXPECT_EQ(again.data(), first) << "the next step's block of the same size is the freed one";
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(again.data()) % buffer_alignment, 0u);
  Buffer other(bytes);  // none left of that size: a fresh block
  EXPECT_NE(other.data(), again.data());
  Buffer small(64);     // small blocks come from the allocator as always
  EXPECT_NE(small.data(), nullptr);
}

}  // namespace
}  // namespace lt
