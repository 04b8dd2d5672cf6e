#!/usr/bin/env python3
# Einsum equations numpy.einsum is the oracle for, beyond ONNX's six cases: contractions of two
# and three operands (attention's scores, a chain of products), implicit outputs, diagonals
# (repeated labels, also three times), broadcast ellipses, a label summed inside one operand,
# an outer product. Each runs on `tessel run --reference` and `--target llvm`; every output must
# satisfy max|ours - numpy| / max|numpy| <= 1e-5.
# Usage: einsum_vs_numpy.py TESSEL_BIN
import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_check import check, run_tessel  # noqa: E402

TOLERANCE = 1e-5
CASES = [
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 8), (2, 3, 5, 8)]),
    ("bhqk,bhkd->bqhd", [(2, 3, 4, 5), (2, 3, 5, 8)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ba,ca", [(3, 4), (5, 4)]),
    ("ii->i", [(4, 4)]),
    ("iii->", [(3, 3, 3)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("...i,...i->...", [(2, 3, 4), (3, 4)]),
    ("ij,jk->", [(3, 4), (4, 5)]),
    ("abc,cd->ad", [(2, 3, 4), (4, 5)]),
    ("i,j->ij", [(3,), (4,)]),
    ("nchw->nhwc", [(1, 2, 3, 4)]),
]


def main():
    tessel = sys.argv[1]
    rng = np.random.default_rng(20261206)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, (equation, shapes) in enumerate(CASES):
            names = [f"x{i}" for i in range(len(shapes))]
            node = helper.make_node("Einsum", names, ["y"], equation=equation)
            graph = helper.make_graph([node], f"einsum{n}",
                                      [helper.make_tensor_value_info(k, TensorProto.FLOAT, s)
                                       for k, s in zip(names, shapes)],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)], ir_version=7)
            feeds = [rng.standard_normal(s).astype(np.float32) for s in shapes]
            want = np.einsum(equation.replace(" ", ""), *[f.astype(np.float64) for f in feeds])
            _, results = run_tessel(tessel, model, dict(zip(names, feeds)), tmp, f"einsum{n}")
            for mode, got in results.items():
                failures += not check(f"{equation} {mode}", got, [want], TOLERANCE)
    print(f"{len(CASES) * 2 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
