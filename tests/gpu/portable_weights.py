#!/usr/bin/env python3
"""Models small enough to carry to a GPU machine: the graph alone, its weights
regenerated there.

A GPU machine is lent with a 64 MiB carry, less than ResNet-18's weights and
its ONNX together. `make` rewrites a model so that every float initializer of
more than 256 elements lives in an external data file, NAME.weights, whose
contents are random values with that tensor's own mean and standard deviation
(non-negative where the original is, as batch-norm variances must be), drawn
from a seeded generator and described in NAME.weights.json. `fill` writes the
file from the description with numpy alone (no onnx needed), so the graph
(a few hundred KB) and the description travel, and ONNX Runtime and Tessel
read the same weights on both machines. Accuracy is not the point: these are
timing and agreement runs, and the exported models' weights are random too.

    portable_weights.py make resnet18.onnx OUT_DIR     # here: OUT_DIR/resnet18.onnx, .weights.json, .weights
    portable_weights.py fill OUT_DIR                   # there: every *.weights from its .weights.json
"""
import json
import os
import sys

import numpy as np

MIN_ELEMENTS = 256
SEED = 20261206


def fill_one(spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    out_path = os.path.join(os.path.dirname(spec_path), spec["file"])
    with open(out_path + ".tmp", "wb") as out:
        for i, t in enumerate(spec["tensors"]):
            assert out.tell() == t["offset"], f"{t['name']}: offset {t['offset']}, file at {out.tell()}"
            rng = np.random.default_rng([spec["seed"], i])
            values = rng.normal(t["mean"], t["std"], t["count"]).astype(np.float32)
            if t["non_negative"]:
                values = np.abs(values)
            out.write(values.tobytes())
    os.replace(out_path + ".tmp", out_path)
    return out_path, len(spec["tensors"])


def fill(folder):
    for name in sorted(os.listdir(folder)):
        if name.endswith(".weights.json"):
            path, count = fill_one(os.path.join(folder, name))
            print(f"{path}: {count} tensors, {os.path.getsize(path) / 1e6:.1f} MB")


def make(source, out_dir):
    import onnx
    from onnx import numpy_helper

    model = onnx.load(source)
    name = os.path.splitext(os.path.basename(source))[0]
    data_file = name + ".weights"
    tensors, offset = [], 0
    for init in model.graph.initializer:
        if init.data_type != onnx.TensorProto.FLOAT:
            continue
        array = numpy_helper.to_array(init)
        if array.size <= MIN_ELEMENTS:
            continue
        tensors.append({"name": init.name, "count": int(array.size), "offset": offset,
                        "mean": float(array.mean()), "std": float(array.std()),
                        "non_negative": bool(array.min() >= 0)})
        init.ClearField("raw_data")
        init.ClearField("float_data")
        init.data_location = onnx.TensorProto.EXTERNAL
        del init.external_data[:]
        for key, value in (("location", data_file), ("offset", str(offset)), ("length", str(array.size * 4))):
            entry = init.external_data.add()
            entry.key, entry.value = key, value
        offset += array.size * 4
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, name + ".weights.json"), "w") as f:
        json.dump({"file": data_file, "seed": SEED, "tensors": tensors}, f)
    with open(os.path.join(out_dir, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())
    fill_one(os.path.join(out_dir, name + ".weights.json"))
    graph = os.path.getsize(os.path.join(out_dir, name + ".onnx"))
    print(f"{name}: graph {graph / 1e3:.0f} KB, {len(tensors)} tensors ({offset / 1e6:.1f} MB) regenerated from the seed")


def main(argv):
    if len(argv) == 4 and argv[1] == "make":
        make(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "fill":
        fill(argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
