#!/usr/bin/env python3
# While loops and sequences against ONNX Runtime, built with onnx.helper: Newton's square root
# iterated until it converges (a Loop whose body computes its condition, no trip count); a greedy
# decoding loop that stops at an end token within a trip count of 16 and stacks the tokens it
# emitted (an output whose length the run decides), its start token varied so that runs stop
# after different numbers of steps; and a model that splits a tensor into a sequence, maps each
# element through a body, grows a sequence in a Loop and concatenates both. Each runs on
# `tessel run --reference` and `--target llvm`: integers must equal ORT's, floats satisfy
# max|ours - ORT| / max|ORT| <= 1e-4.
# Usage: loops_vs_ort.py TESSEL_BIN
import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_check import compare_with_ort  # noqa: E402

TOLERANCE = 1e-4
VOCAB, EOS, MAX_STEPS = 12, 0, 16


def model_of(nodes, name, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def newton_sqrt():
    """y = x; while max|y' - y| > 1e-4: y = (y + x / y) / 2. No trip count."""
    body = helper.make_graph(
        [helper.make_node("Div", ["x", "y_in"], ["q"]),
         helper.make_node("Add", ["y_in", "q"], ["s"]),
         helper.make_node("Mul", ["s", "half"], ["y_out"]),
         helper.make_node("Sub", ["y_out", "y_in"], ["d"]),
         helper.make_node("Abs", ["d"], ["ad"]),
         helper.make_node("ReduceMax", ["ad"], ["worst"], keepdims=0),
         helper.make_node("Greater", ["worst", "tol"], ["cond_out"])],
        "newton_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_in", TensorProto.FLOAT, [16])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_out", TensorProto.FLOAT, [16])],
        [numpy_helper.from_array(np.array(0.5, np.float32), "half"),
         numpy_helper.from_array(np.array(1e-4, np.float32), "tol")])
    return model_of([helper.make_node("Loop", ["", "", "x"], ["y"], body=body)], "newton",
                    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16])],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16])])


def greedy_decode(rng):
    """tok' = argmax(W[tok]) until tok' == EOS, at most 16 steps; the emitted tokens stacked. W's
    largest entries chain 8 tokens to EOS and leave 3 in a cycle that never reaches it, so the
    start token decides how many steps run (1 to 9, or all 16)."""
    table = rng.standard_normal([VOCAB, VOCAB]).astype(np.float32)
    order = [t for t in rng.permutation(VOCAB) if t != EOS]
    chain, cycle = order[:8], order[8:]
    successor = {a: b for a, b in zip(chain, chain[1:] + [EOS])}
    successor.update({a: b for a, b in zip(cycle, cycle[1:] + cycle[:1])})
    successor[EOS] = chain[0]
    for token, after in successor.items():
        table[token, after] = 5.0
    body = helper.make_graph(
        [helper.make_node("Gather", ["table", "tok_in"], ["logits"]),
         helper.make_node("ArgMax", ["logits"], ["tok_out"], axis=1, keepdims=0),
         helper.make_node("Equal", ["tok_out", "eos"], ["done"]),
         helper.make_node("Not", ["done"], ["going"]),
         helper.make_node("Squeeze", ["going"], ["cond_out"]),
         helper.make_node("Identity", ["tok_out"], ["emitted"])],
        "decode_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("tok_in", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("tok_out", TensorProto.INT64, [1]),
         helper.make_tensor_value_info("emitted", TensorProto.INT64, [1])],
        [numpy_helper.from_array(np.array([EOS], np.int64), "eos")])
    model = model_of([helper.make_node("Loop", ["steps", "", "start"], ["last", "tokens"], body=body)], "decode",
                     [helper.make_tensor_value_info("start", TensorProto.INT64, [1])],
                     [helper.make_tensor_value_info("last", TensorProto.INT64, [1]),
                      helper.make_tensor_value_info("tokens", TensorProto.INT64, None)],
                     [numpy_helper.from_array(np.array(MAX_STEPS, np.int64), "steps"),
                      numpy_helper.from_array(table, "table")])
    return model, table


def sequences():
    """x [6, 4] split into rows, each row's sum of squares (SequenceMap), stacked; a Loop of 3
    iterations appending x[i] * i to a sequence, concatenated."""
    map_body = helper.make_graph(
        [helper.make_node("Mul", ["row", "row"], ["sq"]), helper.make_node("ReduceSum", ["sq"], ["total"], keepdims=0)],
        "map_body", [helper.make_tensor_value_info("row", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("total", TensorProto.FLOAT, [])])
    loop_body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Gather", ["x", "i"], ["xi"]),
         helper.make_node("Mul", ["xi", "fi"], ["scaled"]),
         helper.make_node("Unsqueeze", ["scaled", "zero"], ["row"]),
         helper.make_node("SequenceInsert", ["seq_in", "row"], ["seq_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "loop_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("seq_in", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("seq_out", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("SplitToSequence", ["x", "one"], ["rows"], axis=0),
             helper.make_node("SequenceMap", ["rows"], ["totals"], body=map_body),
             helper.make_node("ConcatFromSequence", ["totals"], ["norms"], axis=0, new_axis=1),
             helper.make_node("SequenceEmpty", [], ["empty"], dtype=TensorProto.FLOAT),
             helper.make_node("Loop", ["three", "", "empty"], ["grown"], body=loop_body),
             helper.make_node("ConcatFromSequence", ["grown"], ["stacked"], axis=0)]
    return model_of(nodes, "sequences", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 4])],
                    [helper.make_tensor_value_info("norms", TensorProto.FLOAT, None),
                     helper.make_tensor_value_info("stacked", TensorProto.FLOAT, None)],
                    [numpy_helper.from_array(np.array(1, np.int64), "one"),
                     numpy_helper.from_array(np.array(3, np.int64), "three"),
                     numpy_helper.from_array(np.array([0], np.int64), "zero")])


def compare(tessel, model, feeds, tmp, name, float_outputs):
    return compare_with_ort(tessel, model, feeds, tmp, name, float_outputs, TOLERANCE)


def main():
    tessel = sys.argv[1]
    rng = np.random.default_rng(20261207)
    failures = runs = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(2):
            x = rng.uniform(1, 100, 16).astype(np.float32)
            ok, _ = compare(tessel, newton_sqrt(), {"x": x}, tmp, f"newton{n}", {"y"})
            failures, runs = failures + (not ok), runs + 1
        decode, table = greedy_decode(rng)
        lengths = set()
        for start in range(VOCAB):
            ok, want = compare(tessel, decode, {"start": np.array([start], np.int64)}, tmp, f"decode{start}", set())
            lengths.add(want[1].shape[0])
            failures, runs = failures + (not ok), runs + 1
        print(f"  decoding ran {sorted(lengths)} steps over the start tokens")
        ok, _ = compare(tessel, sequences(), {"x": rng.standard_normal([6, 4]).astype(np.float32)}, tmp,
                        "sequences", {"norms", "stacked"})
        failures, runs = failures + (not ok), runs + 1
    print(f"{runs - failures} of {runs} runs passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
