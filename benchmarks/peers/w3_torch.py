#!/usr/bin/python3
"""W3 in PyTorch eager (Python): MLP inference at batch 64, log_softmax(L3(relu(L2(relu(L1(x))))))
with nn.Linear layers 784->1024->1024->10 under no_grad, the same input every step, at 2 and 1
threads; the median step time, as bench_torch_w3 reports it for LibTorch.

    /usr/bin/python3 benchmarks/peers/w3_torch.py [--quick]

Needs Debian's python3-torch (optional; nothing builds or tests with it).
"""
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def main():
    reps = 21 if "--quick" in sys.argv[1:] else 201
    gflop = 2.0 * 64 * (784 * 1024 + 1024 * 1024 + 1024 * 10) / 1e9
    torch.manual_seed(0)
    l1, l2, l3 = nn.Linear(784, 1024), nn.Linear(1024, 1024), nn.Linear(1024, 10)
    x = torch.randn(64, 784)
    print(f"W3 PyTorch {torch.__version__} eager (Python), MLP 784-1024-1024-10, batch 64 (median of {reps} steps)")
    with torch.no_grad():
        for threads in (2, 1):
            torch.set_num_threads(threads)
            for _ in range(10):
                F.log_softmax(l3(F.relu(l2(F.relu(l1(x))))), 1)
            times = []
            for _ in range(reps):
                start = time.perf_counter()
                F.log_softmax(l3(F.relu(l2(F.relu(l1(x))))), 1)
                times.append(time.perf_counter() - start)
            t = statistics.median(times)
            print(f" {threads} thread{'s' if threads > 1 else ''} (torch.get_num_threads() = {torch.get_num_threads()})")
            print(f"  torch eager W3 step {1e6 * t:12.3f} us  {gflop / t:8.2f} GFLOP/s")


if __name__ == "__main__":
    main()
