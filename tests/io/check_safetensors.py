#!/usr/bin/env python3
"""An independent check of safetensors files written by lazytensor: it shares no code with the
library's loader, only the published format, read with struct and json.

    check_safetensors.py DIR

DIR holds files and manifest.json, which names each file's expected tensors (dtype, shape and
values; BF16 and F16 values as 16-bit patterns) and metadata. Each file must follow the format strictly
and lay its data out as the reference writer does; its values must be the manifest's."""
import json
import os
import struct
import sys

ENUM_ORDER = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16", "I32", "U32", "F32",
              "F64", "I64", "U64"]
FORMAT = {"BOOL": ("?", 1), "I32": ("i", 4), "I64": ("q", 8), "F32": ("f", 4), "F64": ("d", 8), "BF16": ("H", 2),
          "F16": ("H", 2)}


def fail(path, message):
    raise SystemExit("%s: %s" % (path, message))


def read(path):
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        fail(path, "shorter than the header length")
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        fail(path, "header length %d past the end" % n)
    raw = blob[8:8 + n]
    if n % 8 != 0:
        fail(path, "header length %d is not a multiple of 8" % n)
    text = raw.decode("utf-8")
    stripped = text.rstrip(" ")
    if not (stripped.startswith("{") and stripped.endswith("}")) or len(text) - len(stripped) >= 8:
        fail(path, "the header is not a JSON object padded with fewer than 8 spaces")
    pairs = json.loads(text, object_pairs_hook=lambda p: p)
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        fail(path, "duplicate keys")
    if "__metadata__" in keys and keys[0] != "__metadata__":
        fail(path, "__metadata__ is not the first key")
    data = blob[8 + n:]
    metadata, tensors, at, previous = {}, {}, 0, None
    for name, info in pairs:
        if name == "__metadata__":
            metadata = dict(info)
            if not all(isinstance(v, str) for v in metadata.values()):
                fail(path, "metadata values must be strings")
            continue
        info = dict(info)
        if [k for k, _ in (info.items())] != ["dtype", "shape", "data_offsets"]:
            fail(path, "tensor %r fields are %s" % (name, list(info)))
        dtype, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        count = 1
        for extent in shape:
            count *= extent
        if begin != at or end - begin != count * FORMAT[dtype][1]:
            fail(path, "tensor %r at [%d, %d] does not follow the one before (which ends at %d)" % (name, begin, end, at))
        rank = (-ENUM_ORDER.index(dtype), name)
        if previous is not None and rank < previous:
            fail(path, "tensor %r is out of the reference writer's order" % name)
        previous, at = rank, end
        code, size = FORMAT[dtype]
        values = list(struct.unpack("<%d%s" % (count, code), data[begin:end]))
        tensors[name] = {"dtype": dtype, "shape": shape, "values": values}
    if at != len(data):
        fail(path, "%d data bytes, tensors end at %d" % (len(data), at))
    return tensors, metadata


def main():
    folder = sys.argv[1]
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    if not manifest:
        fail(folder, "the manifest names no file")
    for file_name, expected in manifest.items():
        path = os.path.join(folder, file_name)
        tensors, metadata = read(path)
        if metadata != expected["metadata"]:
            fail(path, "metadata %r, expected %r" % (metadata, expected["metadata"]))
        if sorted(tensors) != sorted(expected["tensors"]):
            fail(path, "tensors %s, expected %s" % (sorted(tensors), sorted(expected["tensors"])))
        for name, want in expected["tensors"].items():
            got = tensors[name]
            for key in ("dtype", "shape", "values"):
                if got[key] != want[key]:
                    fail(path, "tensor %r: %s %r, expected %r" % (name, key, got[key], want[key]))
        for key in ("checkpoint.optimizer", "checkpoint.rng", "checkpoint.parts"):
            if key in metadata:
                json.loads(metadata[key])
        print("%s: %d tensors as expected" % (file_name, len(tensors)))


if __name__ == "__main__":
    main()
