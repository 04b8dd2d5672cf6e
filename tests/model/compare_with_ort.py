#!/usr/bin/env python3
# Real-model test: runs each exported model (scripts/export_models.py) and each small real model
# of ../shared/models on Tessel and on ONNX Runtime with the same seeded inputs; every output must
# satisfy max|ours - ORT| / max|ORT| <= 1e-4. Tessel is the reference executor (`tessel run
# --reference`), or with --compiled the model compiled by `tessel compile` to a model.so, loaded
# with the Python package (python/tessel) and, with --c-example, also run by the C example
# (examples/c_api/main.c) built against it; with --target T, `tessel run --target T` (cuda-emulated:
# the generated CUDA C run on this CPU). Usage: compare_with_ort.py TESSEL_BIN [--compiled | --target T]
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CACHE = os.environ.get("TESSEL_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "tessel"))
EXPORTED = ["resnet18", "mobilenet_v2", "squeezenet1_1", "transformer_encoder_layer",
            "decoder_block", "upsampling_head", "speech_lstm",
            "refine_and_choose"]  # the last four built with onnx.helper (build_op_models.py)
SEED = 20261202
TOLERANCE = 1e-4
NEAR_ZERO = 1e-6  # max|ORT| below this on every output: the comparison means nothing


def safe_name(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


# ---- inputs ---------------------------------------------------------------------------------

def int16_audio(rng, samples, sr=16000):
    """Speech-band tones plus noise at int16 amplitude, as openWakeWord feeds its front end
    (16 kHz int16 PCM converted to float32 without rescaling)."""
    t = np.arange(samples) / sr
    x = (4000 * np.sin(2 * np.pi * 220 * t + rng.uniform(0, 2 * np.pi))
         + 2500 * np.sin(2 * np.pi * 1370 * t + rng.uniform(0, 2 * np.pi))
         + 1200 * np.sin(2 * np.pi * 3100 * t + rng.uniform(0, 2 * np.pi))
         + rng.normal(0, 700, samples))
    return np.clip(np.round(x), -32768, 32767).astype(np.float32)[None, :]


def normal_input(shape):
    def make(rng, ort):
        return rng.standard_normal(shape).astype(np.float32)
    return make


def ppocr_input(rng, ort):
    # PaddleOCR's classifier sees an image normalised to [-1, 1]: (pixel / 255 - 0.5) / 0.5.
    pixels = rng.integers(0, 256, size=(1, 3, 48, 192))
    return ((pixels / 255.0 - 0.5) / 0.5).astype(np.float32)


def melspec_input(rng, ort):
    return int16_audio(rng, 1280)


def embedding_input(rng, ort):
    # openWakeWord's embedding model reads 76 mel frames of the front end, rescaled as
    # openWakeWord does (mel / 10 + 2): make them with ORT from 76 frames' worth of audio.
    samples = 75 * 160 + 512
    mel_path = os.path.join(shared_models_dir(), "oww_melspectrogram.onnx")
    mel = ort.InferenceSession(mel_path, providers=["CPUExecutionProvider"])
    frames = mel.run(None, {"input": int16_audio(rng, samples)})[0]  # [1, 1, 76, 32]
    assert frames.shape == (1, 1, 76, 32), frames.shape
    return (frames[0, 0] / 10.0 + 2.0).astype(np.float32)[None, :, :, None]


def shared_models_dir():
    return os.path.normpath(os.environ.get("TESSEL_SHARED_MODELS",
                                           os.path.join(REPO, "..", "shared", "models")))


def model_specs(exported_dir):
    """[(name, onnx path, {input name: maker}, {input name: shape for --input-shape})]."""
    specs = []
    manifest_path = os.path.join(exported_dir, "manifest.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    for name in EXPORTED:
        entry = manifest.get(name)
        if entry is None:
            specs.append((name, os.path.join(exported_dir, name + ".onnx"), None, {}))
            continue
        makers = {i["name"]: normal_input(tuple(i["shape"])) for i in entry["inputs"]}
        specs.append((name, os.path.join(exported_dir, entry["file"]), makers, {}))
    shared = shared_models_dir()
    specs.append(("ppocr_mobile_v2_cls", os.path.join(shared, "ppocr_mobile_v2_cls.onnx"),
                  {"x": ppocr_input}, {"x": (1, 3, 48, 192)}))
    specs.append(("oww_melspectrogram", os.path.join(shared, "oww_melspectrogram.onnx"),
                  {"input": melspec_input}, {"input": (1, 1280)}))
    specs.append(("oww_embedding", os.path.join(shared, "oww_embedding.onnx"),
                  {"input_1": embedding_input}, {"input_1": (1, 76, 32, 1)}))
    return specs


# ---- one model ------------------------------------------------------------------------------

def run_step(cmd, what, timeout):
    """(output, "") of a command that succeeded, or (None, why it failed)."""
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"{what} timed out after {timeout} s"
    if proc.returncode != 0:
        return None, f"{what} exited with {proc.returncode}:\n" + last_lines(proc.stdout)
    return proc.stdout, ""


def run_in_process(tessel, path, shape_args, in_dir, out_dir, timeout, mode):
    """(ok, {output name: array}, message) of `tessel run` with mode's options (--reference, or
    --target T: the model compiled in memory for T)."""
    cmd = [tessel, "run", path] + mode + ["--inputs", in_dir, "--out", out_dir] + shape_args
    output, error = run_step(cmd, "tessel run", timeout)
    if output is None:
        return False, {}, error
    produced = {}
    for line in output.splitlines():
        m = OUTPUT_LINE.match(line.strip())
        if m and os.path.exists(m.group(2).strip()):
            produced[m.group(1)] = np.load(m.group(2).strip())
    return True, produced, ""


C_EXAMPLE = None  # the C example's source when --c-example is given


def run_compiled(tessel, path, shape_args, feeds, mdir, timeout):
    """(ok, {output name: array}, message): `tessel compile` to a .so, run through the Python
    package, and (with --c-example) through the C example built against the .so."""
    so = os.path.join(mdir, "model.so")
    output, error = run_step([tessel, "compile", path, "-o", so] + shape_args, "tessel compile", timeout)
    if output is None:
        return False, {}, error
    sys.path.insert(0, os.path.join(REPO, "python"))
    import tessel as tessel_py
    model = tessel_py.load(so)
    try:
        produced = model.run(feeds)
    finally:
        model.close()
    if C_EXAMPLE:
        app = os.path.join(mdir, "c_example")
        build = ["cc", "-O2", "-I", os.path.join(REPO, "include"), C_EXAMPLE, so, "-o", app, f"-Wl,-rpath,{mdir}"]
        for cmd, what in [(build, "building the C example"), ([app], "the C example")]:
            output, error = run_step(cmd, what, timeout)
            if output is None:
                return False, {}, error
    return True, produced, ""


# tessel run prints "output 'NAME' f32[1, 1000] -> PATH" for each output it wrote.
OUTPUT_LINE = re.compile(r"^output '(.*)' \w+\[[^\]]*\] -> (.+)$")


def last_lines(text, n=6):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return "\n".join("    | " + l for l in lines[-n:])


def check_model(ort, tessel, index, spec, work, timeout, threads, compiled, target):
    name, path, makers, shapes = spec
    if makers is None:
        return False, f"not in the export manifest (run scripts/export_models.py): {path}"
    if not os.path.exists(path):
        return False, f"model file missing: {path}"
    rng = np.random.default_rng([SEED, index])
    mdir = os.path.join(work, name)
    in_dir, out_dir = os.path.join(mdir, "inputs"), os.path.join(mdir, "out")
    os.makedirs(in_dir, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    # Basic optimisations only (constant folding, dead-node removal): exact rewrites, so ORT stays
    # a faithful oracle rather than a set of fused, re-associated kernels.
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    graph_inputs = [i.name for i in sess.get_inputs()]
    if set(graph_inputs) != set(makers):
        return False, f"graph inputs {graph_inputs}, the test knows {sorted(makers)}"
    feeds = {}
    for in_name in graph_inputs:
        feeds[in_name] = makers[in_name](rng, ort)
        np.save(os.path.join(in_dir, safe_name(in_name) + ".npy"), feeds[in_name])

    t0 = time.monotonic()
    ref_outputs = sess.run(None, feeds)
    ort_s = time.monotonic() - t0
    out_names = [o.name for o in sess.get_outputs()]

    shape_args = []
    for in_name, shape in shapes.items():
        shape_args += ["--input-shape", f"{in_name}={'x'.join(str(d) for d in shape)}"]
    t0 = time.monotonic()
    if compiled:
        ok, produced, message = run_compiled(tessel, path, shape_args, feeds, mdir, timeout)
    else:
        mode = ["--target", target] if target else ["--reference"]
        ok, produced, message = run_in_process(tessel, path, shape_args, in_dir, out_dir, timeout, mode)
    ours_s = time.monotonic() - t0
    if not ok:
        return False, message

    worst, max_ref, details, ok = 0.0, 0.0, [], True
    for out_name, ref in zip(out_names, ref_outputs):
        ref = np.asarray(ref)
        ours = produced.get(out_name)
        if ours is None:
            ok = False
            details.append(f"output '{out_name}': not produced (tessel gave {sorted(produced)})")
            continue
        if ours.shape != ref.shape:
            ok = False
            details.append(f"output '{out_name}': shape {list(ours.shape)}, ORT {list(ref.shape)}")
            continue
        ref64, ours64 = ref.astype(np.float64), ours.astype(np.float64)
        m_ref = float(np.max(np.abs(ref64))) if ref64.size else 0.0
        max_ref = max(max_ref, m_ref)
        if not np.all(np.isfinite(ours64)) or not np.all(np.isfinite(ref64)):
            ok = False
            details.append(f"output '{out_name}': non-finite values (ours {int(np.sum(~np.isfinite(ours64)))}, "
                           f"ORT {int(np.sum(~np.isfinite(ref64)))})")
            continue
        diff = float(np.max(np.abs(ours64 - ref64))) if ref64.size else 0.0
        ratio = diff / m_ref if m_ref > 0 else (0.0 if diff == 0 else float("inf"))
        worst = max(worst, ratio)
        if ratio > TOLERANCE:
            ok = False
            at = np.unravel_index(np.argmax(np.abs(ours64 - ref64)), ref64.shape)
            details.append(f"output '{out_name}': ratio {ratio:.3g} > {TOLERANCE:g} "
                           f"(max|diff| {diff:.3g} at {list(map(int, at))}: ours {ours64[at]:.6g}, "
                           f"ORT {ref64[at]:.6g})")
    summary = (f"ratio {worst:.3g}  max|ORT| {max_ref:.3g}  tessel {ours_s:.1f} s  ORT {ort_s:.2f} s")
    if ok and max_ref < NEAR_ZERO:
        ok = False
        details.append(f"every output is near zero (max|ORT| {max_ref:.3g} < {NEAR_ZERO:g}): "
                       "a meaningless comparison")
    return ok, summary + "".join("\n    " + d for d in details)


def main():
    ap = argparse.ArgumentParser(description="Compare Tessel (the reference executor, or compiled models) "
                                             "with ONNX Runtime on real models.")
    ap.add_argument("tessel", help="path of the tessel binary")
    ap.add_argument("--models-dir", default=os.path.join(CACHE, "models"),
                    help="exported models and manifest.json (default: $TESSEL_CACHE/models)")
    ap.add_argument("--shared-dir", help="the small real models (default: $TESSEL_SHARED_MODELS, "
                    "else ../shared/models next to the repository); read in place")
    ap.add_argument("--work", help="keep inputs and outputs in this folder (default: a temporary one)")
    ap.add_argument("--timeout", type=float, default=float(os.environ.get("TESSEL_MODEL_TIMEOUT", 300)),
                    help="seconds per tessel run (default 300)")
    ap.add_argument("--threads", type=int, default=2, help="ONNX Runtime threads")
    ap.add_argument("--compiled", action="store_true",
                    help="compile each model to a .so and run it through the Python package")
    ap.add_argument("--c-example", help="with --compiled: also build this C example against each .so and run it")
    ap.add_argument("--target", help="instead of the reference executor, `tessel run --target T` (the model "
                    "compiled in memory: cuda-emulated runs the generated CUDA C on this CPU)")
    ap.add_argument("models", nargs="*", help="only these models")
    args = ap.parse_intermixed_args()

    global C_EXAMPLE
    C_EXAMPLE = args.c_example
    if args.shared_dir:
        os.environ["TESSEL_SHARED_MODELS"] = args.shared_dir
    import onnxruntime as ort
    tessel = os.path.abspath(args.tessel)
    if not os.access(tessel, os.X_OK):
        sys.exit(f"compare_with_ort: {tessel} is not an executable")
    specs = model_specs(args.models_dir)
    if args.models:
        unknown = set(args.models) - {s[0] for s in specs}
        if unknown:
            sys.exit(f"compare_with_ort: unknown models {sorted(unknown)}")
    print(f"compare_with_ort: onnxruntime {ort.__version__}, numpy {np.__version__}, tessel {tessel}, "
          f"tolerance max|ours-ORT|/max|ORT| <= {TOLERANCE:g}", flush=True)
    work = args.work or tempfile.mkdtemp(prefix="tessel-models-")
    passed = failed = 0
    try:
        for index, spec in enumerate(specs):
            if args.models and spec[0] not in args.models:
                continue
            try:
                ok, message = check_model(ort, tessel, index, spec, work, args.timeout, args.threads,
                                          args.compiled, args.target)
            except Exception as e:  # one broken model must not hide the others
                ok, message = False, f"{type(e).__name__}: {e}"
            print(f"{'PASS' if ok else 'FAIL'} {spec[0]:<26} {message}", flush=True)
            passed += ok
            failed += not ok
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
