// Zero-copy interop: from_blob over caller memory (strides, deleters, the one copy to a lazy
// device), Eigen maps over a cpu tensor's own memory, and to_eigen's refusal of lossy
// conversions.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <lazytensor/lazytensor.hpp>

#include "trace_helpers.hpp"

namespace lt {
namespace {

using testing_helpers::expect_error;

TEST(FromBlob, ViewsTheCallersMemoryWithoutACopy) {
  std::vector<float> memory = {1, 2, 3, 4, 5, 6, 7};  // odd length: no padding past the end
  Tensor t = from_blob(memory.data(), {7});
  EXPECT_EQ(t.device(), cpu);
  EXPECT_EQ(t.dtype(), f32);
  EXPECT_EQ(t.to_vector<float>(), memory);
  EXPECT_EQ(as_eigen_map<float>(t).data(), memory.data());  // the same bytes
  memory[2] = 30;  // reads see the memory as it is now
  EXPECT_EQ(t.to_vector<float>()[2], 30);
  std::vector<float> doubled = Tensor(t * 2).to_vector<float>();
  for (std::size_t i = 0; i < memory.size(); ++i) EXPECT_EQ(doubled[i], memory[i] * 2);
  EXPECT_EQ(t.sum().item<float>(), 1 + 2 + 30 + 4 + 5 + 6 + 7);
  // Ops and in-place ops make new storage: the caller's memory is never written.
  t.add_(1);
  EXPECT_EQ(memory[0], 1);
  EXPECT_EQ(t.to_vector<float>()[0], 2);
}

TEST(FromBlob, StridesReadAsPlainLoopsDo) {
  std::vector<double> memory(13);
  for (std::size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<double>(i) * 1.5 - 4;
  // Rows 4 apart, 3 elements each: a [3, 3] window on a [3, 4] block (the last row's padding
  // element is never reached, so 13 elements suffice for the window ending at 12).
  Tensor rows = from_blob(memory.data(), {3, 3}, {4, 1}, f64);
  std::vector<double> got = rows.to_vector<double>();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(got[static_cast<std::size_t>(r * 3 + c)], memory[static_cast<std::size_t>(r * 4 + c)]);
  // Column-major: element [r, c] at r + 4 * c.
  Tensor cols = from_blob(memory.data(), {4, 3}, {1, 4}, f64);
  std::vector<double> product = cols.matmul(from_vector(std::vector<double>{1, -2, 0.5}, {3})).to_vector<double>();
  for (int r = 0; r < 4; ++r) {
    double ref = 0;
    const double w[] = {1, -2, 0.5};
    for (int c = 0; c < 3; ++c) ref += memory[static_cast<std::size_t>(r + 4 * c)] * w[c];
    EXPECT_DOUBLE_EQ(product[static_cast<std::size_t>(r)], ref);
  }
  // A zero stride repeats a row, as expand does.
  Tensor repeated = from_blob(memory.data(), {2, 5}, {0, 1}, f64);
  std::vector<double> rep = repeated.to_vector<double>();
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 5; ++c) EXPECT_EQ(rep[static_cast<std::size_t>(r * 5 + c)], memory[static_cast<std::size_t>(c)]);
}

TEST(FromBlob, EveryDtype) {
  std::vector<std::int64_t> longs = {5, -3, 8};
  EXPECT_EQ(from_blob(longs.data(), {3}, i64).max().item<std::int64_t>(), 8);
  std::vector<std::int32_t> ints = {5, -3, 8, 1};
  EXPECT_EQ(from_blob(ints.data(), {2, 2}, i32).sum().item<std::int64_t>(), 11);
  bool flags[3] = {true, false, true};
  EXPECT_EQ(from_blob(flags, {3}, boolean).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  float one = 0;
  EXPECT_EQ(from_blob(&one, {0, 4}).numel(), 0);
}

TEST(FromBlob, ADeleterRunsOnceWhenTheLastViewGoes) {
  int calls = 0;
  void* seen = nullptr;
  auto* memory = new float[5]{1, 2, 3, 4, 5};
  {
    Tensor t = from_blob(memory, {5}, [&](void* p) {
      ++calls;
      seen = p;
      delete[] static_cast<float*>(p);
    });
    Tensor view = t.narrow(0, 1, 3), detached = t.detach();
    t = Tensor();
    EXPECT_EQ(calls, 0);  // the view and the detached handle still read the memory
    EXPECT_EQ(view.to_vector<float>(), (std::vector<float>{2, 3, 4}));
    view = Tensor();
    EXPECT_EQ(calls, 0);
    EXPECT_EQ(detached.sum().item<float>(), 15);
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, memory);
  // Strided, with a deleter.
  int strided_calls = 0;
  auto* block = new std::int64_t[6]{1, 2, 3, 4, 5, 6};
  {
    Tensor t = from_blob(block, {2, 3}, {1, 2}, [&](void* p) { ++strided_calls, delete[] static_cast<std::int64_t*>(p); }, i64);
    EXPECT_EQ(t.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 3, 5, 2, 4, 6}));
  }
  EXPECT_EQ(strided_calls, 1);
}

TEST(FromBlob, ALazyLeafCopiesTheMemoryOnce) {
  std::vector<float> memory = {1, 2, 3, 4, 5, 6};
  Tensor host = from_blob(memory.data(), {2, 3});
  const std::int64_t before = metrics::counter("TransferToDevice");
  Tensor on_device = host.to(device());
  EXPECT_EQ(metrics::counter("TransferToDevice"), before + 1);
  memory[0] = 100;  // written after the copy: the device value keeps what it copied
  Tensor doubled = on_device * 2;
  sync();
  EXPECT_EQ(doubled.to_vector<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(on_device.to_vector<float>()[0], 1);
  // A strided blob arrives contiguous, in one copy too.
  Tensor strided = from_blob(memory.data(), {3, 2}, {1, 3}).to(device());
  EXPECT_EQ(strided.to_vector<float>(), (std::vector<float>{100, 4, 2, 5, 3, 6}));
}

TEST(FromBlob, RefusesBadArguments) {
  std::vector<float> memory(8);
  expect_error([] { (void)from_blob(nullptr, {2}); }, "from_blob: data is null");
  expect_error([&] { (void)from_blob(memory.data(), {2, 2}, {1}); }, "from_blob: 1 strides for shape [2, 2]");
  expect_error([&] { (void)from_blob(memory.data(), {2, 2}, {-1, 1}); }, "from_blob: negative stride -1");
  expect_error([&] { (void)from_blob(memory.data(), {2, -2}); }, "negative extent");
  expect_error([&] { (void)from_blob(memory.data(), {std::int64_t{1} << 62, 4}); }, "overflows 64 bits");
  expect_error([&] { (void)from_blob(memory.data(), {4, 4}, {std::int64_t{1} << 61, 1}); }, "from_blob");
  auto* bytes = reinterpret_cast<unsigned char*>(memory.data());
  expect_error([&] { (void)from_blob(bytes + 1, {2}); }, "is not aligned to 4 bytes");
  int calls = 0;  // a refused blob is not taken: the caller still owns it
  expect_error([&] { (void)from_blob(memory.data(), {2}, {-1}, [&](void*) { ++calls; }); }, "negative stride");
  EXPECT_EQ(calls, 0);
}

TEST(EigenInterop, AMapViewsAContiguousCpuTensor) {
  Tensor t = from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  auto m = as_eigen_map<float>(t);
  ASSERT_EQ(m.rows(), 2);
  ASSERT_EQ(m.cols(), 3);
  EXPECT_EQ(m(1, 0), 4);
  EXPECT_EQ(m(0, 2), 3);
  m(1, 2) = 60;  // writes reach the tensor
  EXPECT_EQ(t.to_vector<float>()[5], 60);
  auto v = as_eigen_map<float>(from_vector(std::vector<float>{7, 8, 9}, {3}));
  EXPECT_EQ(v.rows(), 3);
  EXPECT_EQ(v.cols(), 1);
  EXPECT_EQ(as_eigen_map<double>(full({}, 2.5, cpu, f64))(0, 0), 2.5);
  // A contiguous window of a larger tensor maps where it starts.
  Tensor grid = from_vector(std::vector<double>{0, 1, 2, 3, 4, 5}, {3, 2});
  EXPECT_EQ(as_eigen_map<double>(grid.narrow(0, 1, 2))(0, 0), 2);
}

TEST(EigenInterop, AMapRefusesWhatItCannotView) {
  Tensor t = from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  expect_error([&] { (void)as_eigen_map<double>(t); }, "as_eigen_map: the tensor is f32, not f64");
  expect_error([&] { (void)as_eigen_map<float>(t.t()); }, "not contiguous");
  expect_error([&] { (void)as_eigen_map<float>(t.to(device())); }, "as_eigen_map: the tensor is on lazy:0");
  expect_error([&] { (void)as_eigen_map<float>(zeros({2, 2, 2})); }, "rank 0, 1 or 2");
  expect_error([] { (void)as_eigen_map<float>(Tensor()); }, "undefined");
}

TEST(EigenInterop, ToEigenRefusesLossyConversionsUnlessAsked) {
  Tensor f = from_vector(std::vector<float>{1.75f, -2.5f, 3}, {3});
  expect_error([&] { (void)to_eigen<int>(f); }, "to_eigen: converting f32 to i32 loses values");
  auto truncated = to_eigen<int>(f, allow_lossy);
  EXPECT_EQ(truncated(0, 0), 1);
  EXPECT_EQ(truncated(1, 0), -2);
  auto widened = to_eigen<double>(f);  // exact
  EXPECT_EQ(widened(1, 0), -2.5);
  Tensor longs = from_vector(std::vector<std::int64_t>{(std::int64_t{1} << 53) + 1}, {1});
  expect_error([&] { (void)to_eigen<double>(longs); }, "i64 to f64");
  EXPECT_EQ(to_eigen<double>(longs, allow_lossy)(0, 0), static_cast<double>(std::int64_t{1} << 53));
  Tensor ints = from_vector(std::vector<std::int32_t>{-7, 9}, {2});
  EXPECT_EQ(to_eigen<double>(ints)(0, 0), -7);
  EXPECT_EQ(to_eigen<std::int64_t>(ints)(1, 0), 9);
  expect_error([&] { (void)to_eigen<float>(ints); }, "i32 to f32");
  EXPECT_EQ(to_eigen<float>(ones({2}) > 0)(1, 0), 1);  // bool into anything
}

}  // namespace
}  // namespace lt
