#pragma once
// The x86 capability levels lazytensor compiles its kernels for, what this CPU runs, and the
// level a file's own flags compile for. The implementation picks one level's kernels at load
// (ops/kernel_levels.hpp); this header only names and detects them.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

namespace lt {

/// An instruction-set level, lowest first: each includes the ones before it.
enum class CpuCapability : std::uint8_t {
  baseline,     ///< x86-64 as every 64-bit CPU runs it (SSE2)
  v2,           ///< x86-64-v2: SSE4.2, POPCNT
  avx2,         ///< x86-64-v3: AVX2, FMA, BMI2
  avx512,       ///< x86-64-v4: AVX-512 F, BW, CD, DQ, VL
  avx512_bf16,  ///< x86-64-v4 with AVX512-BF16 (vdpbf16ps)
};
inline constexpr int cpu_capability_count = 5;

/// The name LT_CPU_CAPABILITY takes and the metrics print: "baseline", "v2", "avx2", ...
constexpr std::string_view capability_name(CpuCapability c) {
  constexpr std::array<std::string_view, cpu_capability_count> names{"baseline", "v2", "avx2", "avx512", "avx512_bf16"};
  return names[static_cast<std::size_t>(c)];
}

/// The level of that name, or nothing.
constexpr std::optional<CpuCapability> parse_capability(std::string_view name) {
  for (int k = 0; k < cpu_capability_count; ++k)
    if (capability_name(static_cast<CpuCapability>(k)) == name) return static_cast<CpuCapability>(k);
  return std::nullopt;
}

/// The level the including file's compiler flags target: the kernels it compiles inline (a
/// fragment's, a test's) are built for this one.
constexpr CpuCapability compiled_capability() {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && defined(__AVX512BF16__)
  return CpuCapability::avx512_bf16;
#elif defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
  return CpuCapability::avx512;
#elif defined(__AVX2__) && defined(__FMA__) && defined(__BMI2__)
  return CpuCapability::avx2;
#elif defined(__SSE4_2__) && defined(__POPCNT__)
  return CpuCapability::v2;
#else
  return CpuCapability::baseline;
#endif
}

/// A number per level for names that must differ between the copies of a function compiled
/// at different levels (a cached choice inside an inline function, whose one copy the linker
/// would otherwise share between them).
#define LT_COMPILED_LEVEL (static_cast<int>(::lt::compiled_capability()))

namespace detail {
struct CpuFeatures {
  bool v2 = false, avx2 = false, avx512 = false, avx512_bf16 = false;
};

/// Reads CPUID, and XGETBV for the register state the OS saves (AVX needs the YMM state,
/// AVX-512 the opmask and ZMM state as well).
inline CpuFeatures read_cpu_features() {
  CpuFeatures f;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return f;
  __cpuid_count(1, 0, a, b, c, d);
  const bool sse3 = c & (1u << 0), ssse3 = c & (1u << 9), fma = c & (1u << 12), cx16 = c & (1u << 13),
             sse41 = c & (1u << 19), sse42 = c & (1u << 20), movbe = c & (1u << 22), popcnt = c & (1u << 23),
             xsave = c & (1u << 26), osxsave = c & (1u << 27), avx = c & (1u << 28), f16c = c & (1u << 29);
  f.v2 = sse3 && ssse3 && cx16 && sse41 && sse42 && popcnt;
  std::uint64_t xcr0 = 0;
  if (osxsave) {
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (std::uint64_t{hi} << 32) | lo;
  }
  const bool ymm_state = (xcr0 & 0x6) == 0x6, zmm_state = (xcr0 & 0xe6) == 0xe6;
  __cpuid_count(7, 0, a, b, c, d);
  const bool bmi1 = b & (1u << 3), avx2 = b & (1u << 5), bmi2 = b & (1u << 8), avx512f = b & (1u << 16),
             avx512dq = b & (1u << 17), avx512cd = b & (1u << 28), avx512bw = b & (1u << 30), avx512vl = b & (1u << 31);
  __cpuid_count(0x80000001, 0, a, b, c, d);
  const bool lzcnt = c & (1u << 5);
  f.avx2 = f.v2 && ymm_state && xsave && avx && avx2 && fma && f16c && bmi1 && bmi2 && lzcnt && movbe;
  f.avx512 = f.avx2 && zmm_state && avx512f && avx512dq && avx512cd && avx512bw && avx512vl;
  __cpuid_count(7, 1, a, b, c, d);
  f.avx512_bf16 = f.avx512 && (a & (1u << 5));
#endif
  return f;
}
}  // namespace detail

/// Whether this CPU (and its OS) runs the instructions of level `c`.
inline bool cpu_supports(CpuCapability c) {
  static const detail::CpuFeatures f = detail::read_cpu_features();
  switch (c) {
    case CpuCapability::baseline: return true;
    case CpuCapability::v2: return f.v2;
    case CpuCapability::avx2: return f.avx2;
    case CpuCapability::avx512: return f.avx512;
    case CpuCapability::avx512_bf16: return f.avx512_bf16;
  }
  return false;
}

/// The highest level this CPU runs.
inline CpuCapability best_cpu_capability() {
  CpuCapability best = CpuCapability::baseline;
  for (int k = 0; k < cpu_capability_count; ++k)
    if (cpu_supports(static_cast<CpuCapability>(k))) best = static_cast<CpuCapability>(k);
  return best;
}

/// The CPU's model name as CPUID gives it ("Intel(R) Xeon(R) Platinum 8480+", "AMD EPYC 9R14
/// 96-Core Processor"), with its family and model numbers: every log that reports a kernel
/// figure names the CPU it ran on.
inline std::string cpu_model_name() {
  std::string name;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  unsigned regs[12] = {};
  if (__get_cpuid_max(0x80000000, nullptr) >= 0x80000004) {
    for (unsigned k = 0; k < 3; ++k) __cpuid(0x80000002 + k, regs[4 * k], regs[4 * k + 1], regs[4 * k + 2], regs[4 * k + 3]);
    name.assign(reinterpret_cast<const char*>(regs), sizeof regs);
    name.resize(name.find('\0') == std::string::npos ? name.size() : name.find('\0'));
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
  }
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid(1, a, b, c, d);
  unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
  if (family == 0xf) family += (a >> 20) & 0xff;
  if (family == 0x6 || family >= 0xf) model |= ((a >> 16) & 0xf) << 4;
  name += " (family " + std::to_string(family) + ", model " + std::to_string(model) + ")";
#else
  name = "unknown CPU";
#endif
  return name;
}

}  // namespace lt
