# Structure-aware seeds for the importer fuzzer: the milestone models of
# onnx-node with one extreme value each (a dimension, an int attribute, or a
# constant shape-like input). Usage: extreme_seeds.py NODE_DIR OUT_DIR [SEED]
import copy
import os
import random
import sys

import numpy as np
import onnx
from onnx import numpy_helper

EXTREMES = [0, 1, -1, 2, -2, 7, 1 << 20, 1 << 31, (1 << 31) - 1, 1 << 40, 1 << 62, (1 << 63) - 1, -(1 << 63)]
INT_TYPES = {onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32}


def extreme_dim(g):
    vis = [vi for vi in list(g.input) + list(g.output) if vi.type.tensor_type.shape.dim]
    if not vis:
        return False
    d = random.choice(random.choice(vis).type.tensor_type.shape.dim)
    v = random.choice(EXTREMES)
    if v >= 0:
        d.dim_value = v
    else:
        d.dim_param = "S"
    return True


def extreme_attr(g):
    attrs = [a for n in g.node for a in n.attribute
             if a.type == onnx.AttributeProto.INT or (a.type == onnx.AttributeProto.INTS and a.ints)]
    if not attrs:
        return False
    a = random.choice(attrs)
    if a.type == onnx.AttributeProto.INT:
        a.i = random.choice(EXTREMES)
    else:
        a.ints[random.randrange(len(a.ints))] = random.choice(EXTREMES)
    return True


def extreme_constant_input(g):
    ints = [vi for vi in g.input if vi.type.tensor_type.elem_type in INT_TYPES]
    if not ints:
        return False
    vi = random.choice(ints)
    tt = vi.type.tensor_type
    shape = [max(0, min(d.dim_value, 4)) for d in tt.shape.dim]
    dtype = INT_TYPES[tt.elem_type]
    info = np.iinfo(dtype)
    values = [random.choice([v for v in EXTREMES if info.min <= v <= info.max]) for _ in range(int(np.prod(shape)))]
    g.initializer.append(numpy_helper.from_array(np.array(values, dtype=dtype).reshape(shape), vi.name))
    for d, s in zip(tt.shape.dim, shape):
        d.dim_value = s
    return True


def main():
    node_dir, out_dir = sys.argv[1], sys.argv[2]
    random.seed(int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    names = [line.strip() for f in ("milestone1.txt", "milestone1-extended.txt")
             for line in open(os.path.join(node_dir, f)) if line.strip()]
    os.makedirs(out_dir, exist_ok=True)
    count = 0
    for name in names:
        path = os.path.join(node_dir, name, "model.onnx")
        if not os.path.exists(path):
            continue
        base = onnx.load(path)
        for k in range(8):
            m = copy.deepcopy(base)
            if random.choice([extreme_dim, extreme_attr, extreme_constant_input])(m.graph):
                with open(os.path.join(out_dir, f"{name}_x{k}.onnx"), "wb") as f:
                    f.write(m.SerializeToString())
                count += 1
    print(f"{count} extreme seeds in {out_dir}")


if __name__ == "__main__":
    main()
