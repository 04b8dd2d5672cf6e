"""What the operator tests against a peer share: a model run by `tessel run` on the reference
executor and compiled through LLVM, and each result held to the peer's with a printed verdict."""
import os
import subprocess

import numpy as np
import onnx

MODES = (["--reference"], ["--target", "llvm"])


def run_tessel(tessel, model, feeds, tmp, name, flags_of_both=()):
    """Saves `model` and `feeds` under `tmp` and runs both modes, each with `flags_of_both` too.
    Returns the model's path and, per mode ("--reference", "llvm"), its outputs by name, or the
    error text when the run failed."""
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(model, path)
    in_dir, out_dir = os.path.join(tmp, name + "_in"), os.path.join(tmp, name + "_out")
    os.makedirs(in_dir, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)
    for key, value in feeds.items():
        np.save(os.path.join(in_dir, key + ".npy"), value)
    outputs = [o.name for o in model.graph.output]
    results = {}
    for flags in MODES:
        run = subprocess.run([tessel, "run", path, *flags, *flags_of_both, "--inputs", in_dir, "--out", out_dir],
                             capture_output=True, text=True)
        if run.returncode != 0:
            results[flags[-1]] = f"exit {run.returncode}\n{run.stdout}{run.stderr}"
        else:
            results[flags[-1]] = {o: np.load(os.path.join(out_dir, o + ".npy")) for o in outputs}
    return path, results


def check(label, got, want, tolerance=None):
    """Prints PASS or FAIL for one mode's outputs against the peer's (a list in output order):
    max|ours - peer| / max|peer| <= tolerance, or equal everywhere when tolerance is None. True
    when they match."""
    if isinstance(got, str):
        print(f"FAIL {label}: {got}")
        return False
    worst, ok = 0.0, len(got) == len(want)
    for ours, theirs in zip(got.values(), want):
        if ours.shape != theirs.shape:
            ok = False
            continue
        if tolerance is None:
            worst = max(worst, float(np.count_nonzero(ours != theirs)))
        else:
            worst = max(worst, float(np.abs(ours - theirs).max() / max(1e-6, float(np.abs(theirs).max()))))
    ok = ok and worst <= (0 if tolerance is None else tolerance)
    measure = f"{int(worst)} differ" if tolerance is None else f"ratio {worst:.2e}"
    print(f"{'PASS' if ok else 'FAIL'} {label:48s} {measure}")
    return ok


def compare_with_ort(tessel, model, feeds, tmp, name, float_outputs, tolerance):
    """Runs `model` on both modes and on ONNX Runtime's CPU provider; checks each output by name
    (outputs in `float_outputs` within `tolerance`, the others exactly). Returns whether all
    matched and ORT's outputs."""
    import onnxruntime as ort
    path, results = run_tessel(tessel, model, feeds, tmp, name)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
    ok = True
    for mode, got in results.items():
        for k, out in enumerate(o.name for o in model.graph.output):
            got_one = got if isinstance(got, str) else {out: got[out]}
            ok &= check(f"{name} {out} {mode}", got_one, [want[k]], tolerance if out in float_outputs else None)
    return ok, want
