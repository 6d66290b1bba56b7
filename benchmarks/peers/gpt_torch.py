#!/usr/bin/python3
"""examples/gpt.cpp in PyTorch eager: the same byte-level GPT, fortunes split, windows (the same
splitmix64 stream), seed and hyper-parameters, for comparing validation losses and step times.

    /usr/bin/python3 benchmarks/peers/gpt_torch.py [the flags of examples/gpt]

Needs Debian's python3-torch (optional; nothing builds or tests with it). Initial weights come
from torch's generator, drawn from the same distributions as lazytensor's, unless --init FILE
names a state dict written by `examples/gpt --init FILE`: then both start from the same values.
"""
import argparse
import json
import math
import os
import re
import random
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MASK64 = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def read_fortunes(directory):
    """As examples/gpt_data.hpp: files without extension in name order, every tenth fortune
    for validation."""
    names = sorted(n for n in os.listdir(directory)
                   if "." not in n and os.path.isfile(os.path.join(directory, n))
                   and not os.path.islink(os.path.join(directory, n)))
    train, validation, count = bytearray(), bytearray(), 0
    for name in names:
        with open(os.path.join(directory, name), "rb") as f:
            body = f.read()
        start = 0
        while start < len(body):
            end = body.find(b"\n%\n", start)
            end = len(body) if end < 0 else end + 3
            count += 1
            (validation if count % 10 == 0 else train).extend(body[start:end])
            start = end
    return bytes(train), bytes(validation), len(names), count


def windows(text, starts, context):
    x = torch.tensor([list(text[s:s + context]) for s in starts], dtype=torch.long)
    y = torch.tensor([list(text[s + 1:s + context + 1]) for s in starts], dtype=torch.long)
    return x, y


class Block(nn.Module):
    def __init__(self, d, heads, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.proj = nn.Linear(4 * d, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.drop(self.attn(h, h, h, need_weights=False, attn_mask=mask)[0])
        return x + self.drop(self.proj(F.gelu(self.fc(self.ln2(x)))))


class Gpt(nn.Module):
    def __init__(self, vocab, context, d, heads, layers, dropout):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(context, d) * 0.02)  # lazytensor's PositionalEmbedding
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(Block(d, heads, dropout) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        t = ids.shape[1]
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)  # true: not attended
        x = self.drop(self.tok(ids) + self.pos[:t])
        for b in self.blocks:
            x = b(x, mask)
        return self.head(self.ln_f(x))


def load_initial(model, path):
    """Copies the F32 tensors of the safetensors file `path` (examples/gpt's names: h<i>. for
    blocks.<i>., pos.weight for pos) into model's parameters; every parameter must be there."""
    with open(path, "rb") as f:
        data = f.read()
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + size])
    body = memoryview(data)[8 + size:]
    params = dict(model.named_parameters())
    loaded = set()
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] != "F32":
            raise SystemExit(f"{path}: {name} is {entry['dtype']}, not F32")
        ours = re.sub(r"^h(\d+)\.", r"blocks.\1.", "pos" if name == "pos.weight" else name)
        begin, end = entry["data_offsets"]
        values = torch.frombuffer(bytearray(body[begin:end]), dtype=torch.float32).reshape(entry["shape"])
        with torch.no_grad():
            params[ours].copy_(values)
        loaded.add(ours)
    missing = set(params) - loaded
    if missing:
        raise SystemExit(f"{path}: no values for {sorted(missing)}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--context", type=int, default=128)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--eval-batches", type=int, default=8)
    p.add_argument("--sample", type=int, default=240)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--dir", default="/usr/share/games/fortunes")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--init", help="initial weights written by examples/gpt --init FILE")
    o = p.parse_args()
    torch.set_num_threads(o.threads)
    torch.manual_seed(o.seed)
    train, validation, files, fortunes = read_fortunes(o.dir)
    print(f"fortunes: {files} files, {fortunes} fortunes; {len(train)} bytes for training, "
          f"{len(validation)} for validation")
    model = Gpt(256, o.context, o.d_model, o.heads, o.layers, o.dropout)
    if o.init:
        load_initial(model, o.init)
        print(f"initial weights loaded from {o.init}")
    print(f"GPT: {o.layers} layers, d_model {o.d_model}, {o.heads} heads, context {o.context}: "
          f"{sum(q.numel() for q in model.parameters()) / 1e6:.2f}M parameters")
    decay = [q for q in model.parameters() if q.dim() >= 2]
    no_decay = [q for q in model.parameters() if q.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=o.lr, betas=(0.9, 0.99))
    total = o.epochs * o.steps
    # Hugging Face's get_linear_schedule_with_warmup over total + 1 steps, begun one step in.
    def rate(step):
        if step < o.warmup:
            return step / max(1, o.warmup)
        return max(0.0, (total + 1 - step) / max(1, total + 1 - o.warmup))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, rate)
    opt.step()  # no gradients yet: changes nothing, but LambdaLR warns of a step before the optimizer's
    sched.step()
    rng = SplitMix64(o.seed)
    t, n = o.context, o.batch
    for e in range(1, o.epochs + 1):
        model.train()
        start = time.perf_counter()
        for s in range(1, o.steps + 1):
            starts = [rng.next() % (len(train) - t) for _ in range(n)]
            x, y = windows(train, starts, t)
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x).reshape(-1, 256), y.reshape(-1))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            if s % 10 == 0:
                print(f"\repoch {e} {s}/{o.steps}  {s / (time.perf_counter() - start):.2f} steps/s  "
                      f"loss {loss.item():.4f}", end="", file=sys.stderr, flush=True)
        seconds = time.perf_counter() - start
        print(file=sys.stderr)
        model.eval()
        count = o.eval_batches * n
        last = len(validation) - t - 1
        all_starts = [0 if count == 1 else last * i // (count - 1) for i in range(count)]
        losses = []
        with torch.no_grad():
            for b in range(o.eval_batches):
                x, y = windows(validation, all_starts[b * n:(b + 1) * n], t)
                losses.append(F.cross_entropy(model(x).reshape(-1, 256), y.reshape(-1)).item())
        val = sum(losses) / len(losses)
        print(f"epoch {e}: validation loss {val:.4f}, perplexity {math.exp(val):.2f}, "
              f"{1e3 * seconds / o.steps:.0f} ms per training step")
    model.eval()
    gen = random.Random(o.seed)
    for temperature in (0.0, o.temperature):
        text = bytearray(b"The ")
        with torch.no_grad():
            for _ in range(o.sample):
                window = torch.tensor([list(text[-t:])], dtype=torch.long)
                logits = model(window)[0, -1]
                if temperature <= 0:
                    nxt = int(logits.argmax())
                else:
                    probs = torch.softmax(logits / temperature, -1).tolist()
                    nxt = gen.choices(range(256), weights=probs)[0]
                text.append(nxt)
        title = "greedy" if temperature <= 0 else f"temperature {temperature:.2f}"
        shown = "".join(chr(c) if 32 <= c < 127 or c in (9, 10) else "?" for c in text)
        print(f"\n--- {title} ---\n{shown}")


if __name__ == "__main__":
    main()
