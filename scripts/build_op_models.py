#!/usr/bin/env python3
# Builds, with onnx.helper and seeded random weights, the small realistic models that exercise the
# operators real exports carry beyond the CNN and encoder tests: a language-model decoder block
# (RMSNormalization, RotaryEmbedding, grouped-query causal Attention with a KV cache) at opset 23,
# and an upsampling detection head (Resize nearest and linear, as FPN necks and segmentation heads
# use it) at opset 19, and a keyword-spotting speech model (bidirectional LSTM with sequence
# lengths, then a GRU) at opset 12, and a Loop and a data-dependent If at opset 16. export_models.py writes them beside the exported models, in its manifest.
import numpy as np

SEED = 20261206


def _weights(rng, *shape, scale=None):
    fan_in = shape[0] if len(shape) == 2 else int(np.prod(shape[1:]))
    return (rng.standard_normal(shape) * (scale or 1 / np.sqrt(fan_in))).astype(np.float32)


def decoder_block(onnx, helper, numpy_helper):
    """x [1, 6, 64] with a 10-position KV cache: h = x + W_o Attention(RoPE(W_q n), RoPE(W_k n), W_v n),
    n = RMSNorm(x); 4 query heads share 2 key/value heads of 16; causal after the cache."""
    rng = np.random.default_rng([SEED, 1])
    hidden, heads, kv_heads, head, seq, past, max_pos = 64, 4, 2, 16, 6, 10, 32
    positions = np.arange(max_pos)[:, None] / (10000 ** (np.arange(head // 2) / (head // 2)))[None, :]
    inits = [
        numpy_helper.from_array(np.ones(hidden, np.float32) + 0.1 * _weights(rng, hidden, scale=1), "norm_scale"),
        numpy_helper.from_array(_weights(rng, hidden, heads * head), "w_q"),
        numpy_helper.from_array(_weights(rng, hidden, kv_heads * head), "w_k"),
        numpy_helper.from_array(_weights(rng, hidden, kv_heads * head), "w_v"),
        numpy_helper.from_array(_weights(rng, heads * head, hidden), "w_o"),
        numpy_helper.from_array(np.cos(positions).astype(np.float32), "cos_cache"),
        numpy_helper.from_array(np.sin(positions).astype(np.float32), "sin_cache"),
        numpy_helper.from_array(np.arange(past, past + seq, dtype=np.int64)[None, :], "position_ids"),
    ]
    nodes = [
        helper.make_node("RMSNormalization", ["x", "norm_scale"], ["n"], axis=-1, epsilon=1e-6),
        helper.make_node("MatMul", ["n", "w_q"], ["q"]),
        helper.make_node("MatMul", ["n", "w_k"], ["k"]),
        helper.make_node("MatMul", ["n", "w_v"], ["v"]),
        helper.make_node("RotaryEmbedding", ["q", "cos_cache", "sin_cache", "position_ids"], ["q_rot"],
                         num_heads=heads),
        helper.make_node("RotaryEmbedding", ["k", "cos_cache", "sin_cache", "position_ids"], ["k_rot"],
                         num_heads=kv_heads),
        helper.make_node("Attention", ["q_rot", "k_rot", "v", "", "past_key", "past_value"],
                         ["attended", "present_key", "present_value"], is_causal=1, q_num_heads=heads,
                         kv_num_heads=kv_heads),
        helper.make_node("MatMul", ["attended", "w_o"], ["projected"]),
        helper.make_node("Add", ["x", "projected"], ["h"]),
    ]
    f32 = onnx.TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("x", f32, [1, seq, hidden]),
              helper.make_tensor_value_info("past_key", f32, [1, kv_heads, past, head]),
              helper.make_tensor_value_info("past_value", f32, [1, kv_heads, past, head])]
    outputs = [helper.make_tensor_value_info("h", f32, [1, seq, hidden]),
               helper.make_tensor_value_info("present_key", f32, [1, kv_heads, past + seq, head]),
               helper.make_tensor_value_info("present_value", f32, [1, kv_heads, past + seq, head])]
    graph = helper.make_graph(nodes, "decoder_block", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)], ir_version=10)


def upsampling_head(onnx, helper, numpy_helper):
    """A feature map [1, 16, 10, 12] and its finer skip [1, 8, 20, 24]: the coarse one reduced by a 1x1
    conv, upsampled 2x (nearest), concatenated with the skip, mixed by a 3x3 conv, resized to 40 x 48
    (linear, half_pixel) and passed through a sigmoid, as segmentation heads do."""
    rng = np.random.default_rng([SEED, 2])
    inits = [
        numpy_helper.from_array(_weights(rng, 8, 16, 1, 1), "w_reduce"),
        numpy_helper.from_array(_weights(rng, 4, 16, 3, 3), "w_mix"),
        numpy_helper.from_array(0.1 * _weights(rng, 4, scale=1), "b_mix"),
        numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales_2x"),
        numpy_helper.from_array(np.array([1, 4, 40, 48], np.int64), "out_size"),
    ]
    nodes = [
        helper.make_node("Conv", ["coarse", "w_reduce"], ["reduced"]),
        helper.make_node("Resize", ["reduced", "", "scales_2x"], ["up"], mode="nearest"),
        helper.make_node("Concat", ["up", "skip"], ["joined"], axis=1),
        helper.make_node("Conv", ["joined", "w_mix", "b_mix"], ["mixed"], pads=[1, 1, 1, 1]),
        helper.make_node("Resize", ["mixed", "", "", "out_size"], ["full"], mode="linear",
                         coordinate_transformation_mode="half_pixel"),
        helper.make_node("Sigmoid", ["full"], ["mask"]),
    ]
    f32 = onnx.TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("coarse", f32, [1, 16, 10, 12]),
              helper.make_tensor_value_info("skip", f32, [1, 8, 20, 24])]
    outputs = [helper.make_tensor_value_info("mask", f32, [1, 4, 40, 48])]
    graph = helper.make_graph(nodes, "upsampling_head", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


def speech_lstm(onnx, helper, numpy_helper):
    """A keyword spotter over 20 frames of 40 features for a batch of 3 utterances of 20, 13 and 7
    frames: a bidirectional LSTM of 32 (sequence_lens, peepholes off), its two directions joined, a
    GRU of 24 as PyTorch exports it (linear_before_reset), its last state classified into 10
    keywords; also returns the LSTM's final cell states."""
    rng = np.random.default_rng([SEED, 3])
    frames, batch, features, h1, h2, classes = 20, 3, 40, 32, 24, 10
    inits = [
        numpy_helper.from_array(_weights(rng, 2, 4 * h1, features, scale=0.15), "lstm_w"),
        numpy_helper.from_array(_weights(rng, 2, 4 * h1, h1, scale=0.15), "lstm_r"),
        numpy_helper.from_array(_weights(rng, 2, 8 * h1, scale=0.1), "lstm_b"),
        numpy_helper.from_array(np.array([20, 13, 7], np.int32), "lengths"),
        numpy_helper.from_array(_weights(rng, 1, 3 * h2, 2 * h1, scale=0.15), "gru_w"),
        numpy_helper.from_array(_weights(rng, 1, 3 * h2, h2, scale=0.15), "gru_r"),
        numpy_helper.from_array(_weights(rng, 1, 6 * h2, scale=0.1), "gru_b"),
        numpy_helper.from_array(_weights(rng, h2, classes), "w_out"),
        numpy_helper.from_array(np.array([frames, batch, 2 * h1], np.int64), "joined_shape"),
    ]
    nodes = [
        helper.make_node("LSTM", ["x", "lstm_w", "lstm_r", "lstm_b", "lengths"], ["y1", "", "c1"],
                         hidden_size=h1, direction="bidirectional"),
        helper.make_node("Transpose", ["y1"], ["y1_t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["y1_t", "joined_shape"], ["joined"]),
        helper.make_node("GRU", ["joined", "gru_w", "gru_r", "gru_b", "lengths"], ["", "h2"],
                         hidden_size=h2, linear_before_reset=1),
        helper.make_node("Squeeze", ["h2"], ["h2_s"], axes=[0]),
        helper.make_node("MatMul", ["h2_s", "w_out"], ["logits"]),
    ]
    f32 = onnx.TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("x", f32, [frames, batch, features])]
    outputs = [helper.make_tensor_value_info("logits", f32, [batch, classes]),
               helper.make_tensor_value_info("c1", f32, [2, batch, h1])]
    graph = helper.make_graph(nodes, "speech_lstm", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)], ir_version=7)


def refine_and_choose(onnx, helper, numpy_helper):
    """Control flow as exporters write it: a Loop of 4 refinement steps h = tanh(h W + b) from h = x
    (the weights read from the outer graph, every step's h scanned out), then an If on the data
    (the sum of h above zero) choosing a softmax or a halved sigmoid of h."""
    rng = np.random.default_rng([SEED, 4])
    rows, width, steps = 2, 8, 4
    f32 = onnx.TensorProto.FLOAT
    inits = [
        numpy_helper.from_array(_weights(rng, width, width), "w"),
        numpy_helper.from_array(0.1 * _weights(rng, width, scale=1), "b"),
        numpy_helper.from_array(np.array(steps, np.int64), "steps"),
        numpy_helper.from_array(np.array(0, np.float32), "zero"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
    ]
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h_in", "w"], ["hw"]),
         helper.make_node("Add", ["hw", "b"], ["hwb"]),
         helper.make_node("Tanh", ["hwb"], ["h_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["h_out"], ["h_scan"])],
        "refine",
        [helper.make_tensor_value_info("i", onnx.TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", onnx.TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_in", f32, [rows, width])],
        [helper.make_tensor_value_info("cond_out", onnx.TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_out", f32, [rows, width]),
         helper.make_tensor_value_info("h_scan", f32, [rows, width])])
    then_branch = helper.make_graph([helper.make_node("Softmax", ["h"], ["soft"], axis=-1)], "soft",
                                    [], [helper.make_tensor_value_info("soft", f32, [rows, width])])
    else_branch = helper.make_graph([helper.make_node("Sigmoid", ["h"], ["sig"]),
                                     helper.make_node("Mul", ["sig", "half"], ["halved"])], "halved",
                                    [], [helper.make_tensor_value_info("halved", f32, [rows, width])])
    nodes = [
        helper.make_node("Loop", ["steps", "", "x"], ["h", "hs"], body=body),
        helper.make_node("ReduceSum", ["h"], ["total"], keepdims=0),
        helper.make_node("Greater", ["total", "zero"], ["positive"]),
        helper.make_node("If", ["positive"], ["y"], then_branch=then_branch, else_branch=else_branch),
    ]
    inputs = [helper.make_tensor_value_info("x", f32, [rows, width])]
    outputs = [helper.make_tensor_value_info("y", f32, [rows, width]),
               helper.make_tensor_value_info("hs", f32, [steps, rows, width])]
    graph = helper.make_graph(nodes, "refine_and_choose", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], ir_version=8)


BUILDERS = {"decoder_block": decoder_block, "upsampling_head": upsampling_head, "speech_lstm": speech_lstm,
            "refine_and_choose": refine_and_choose}


def build(name, path):
    """Writes model `name` to path; returns its manifest entry's inputs and outputs."""
    import onnx
    from onnx import helper, numpy_helper
    model = BUILDERS[name](onnx, helper, numpy_helper)
    onnx.save(model, path)

    def shape(vi):
        return [d.dim_value for d in vi.type.tensor_type.shape.dim]
    return ([{"name": i.name, "shape": shape(i)} for i in model.graph.input],
            [{"name": o.name, "shape": shape(o)} for o in model.graph.output])
