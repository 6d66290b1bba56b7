#!/usr/bin/python3
"""bench_bf16_gemm's product in PyTorch eager (Python): C = A @ B with A, B [n, n] in bf16 (the
result in bf16; oneDNN where PyTorch has it) and in f32, timed in turns at 2 and 1 threads;
n = 2048 (1024 with --quick). Medians, as bench_bf16_gemm reports them.

    /usr/bin/python3 benchmarks/peers/bf16_gemm_torch.py [--quick]

Needs Debian's python3-torch (optional; nothing builds or tests with it). For f32 at its best,
run it with OpenBLAS's libblas.so.3 first on LD_LIBRARY_PATH (BENCHMARKS.md).
"""
import statistics
import sys
import time

import torch


def main():
    quick = "--quick" in sys.argv[1:]
    n = 1024 if quick else 2048
    rounds = 5 if quick else 11
    gflop = 2.0 * n * n * n / 1e9
    torch.manual_seed(0)
    a, b = torch.randn(n, n), torch.randn(n, n)
    a16, b16 = a.to(torch.bfloat16), b.to(torch.bfloat16)
    print(f"bf16 GEMM PyTorch {torch.__version__} eager (Python), C[{n}, {n}] = A @ B (medians of {rounds} in turns)")
    print(f"  oneDNN (mkldnn) available: {torch.backends.mkldnn.is_available()}")
    for threads in (2, 1):
        torch.set_num_threads(threads)
        times = {"bf16": [], "f32": []}
        for _ in range(rounds):
            for name, (x, y) in (("bf16", (a16, b16)), ("f32", (a, b))):
                time.sleep(0.25)  # let the other library's threads stop spinning
                torch.matmul(x, y)
                start = time.perf_counter()
                torch.matmul(x, y)
                times[name].append(time.perf_counter() - start)
        print(f" {threads} thread{'s' if threads > 1 else ''} (torch.get_num_threads() = {torch.get_num_threads()})")
        for name in ("bf16", "f32"):
            t = statistics.median(times[name])
            print(f"  torch {name:5} {1e3 * t:10.3f} ms  {gflop / t:8.1f} GFLOP/s")


if __name__ == "__main__":
    main()
