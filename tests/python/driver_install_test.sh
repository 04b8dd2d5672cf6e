#!/bin/bash
# pip-installs the package ($1) into a fresh venv (no network: Debian's numpy and setuptools through
# --system-site-packages), which builds the compiler driver in the build tree ($2, TESSEL_BUILD_DIR),
# then compiles, runs, exports, loads, inspects and checks the example model ($3) from outside the
# source tree, and makes the mistakes a user makes.
set -euo pipefail
package=$1 build=$2 model=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
TESSEL_BUILD_DIR=$build "$tmp/venv/bin/pip" install --quiet --no-deps --no-build-isolation "$package"
cd "$tmp"
env -u PYTHONPATH "$tmp/venv/bin/python" - "$model" "$tmp" <<'PY'
import sys
import numpy as np
import tessel
model, tmp = sys.argv[1], sys.argv[2]
assert "site-packages" in tessel.__file__, tessel.__file__
m = tessel.compile(model, target="llvm", fusion="simple", input_shapes={"image": (1, 1, 28, 28)})
assert [i.name for i in m.inputs] == ["image"] and m.inputs[0].shape == (1, 1, 28, 28), m.inputs
image = np.random.default_rng(7).standard_normal((1, 1, 28, 28)).astype(np.float32)
probs = m.run({"image": image})["probs"]
assert probs.shape == (1, 10) and abs(float(probs.sum()) - 1) < 1e-5, probs
unfused = tessel.compile(model, fusion="none", input_shapes={"image": (1, 1, 28, 28)})
assert len(unfused.kernels) > len(m.kernels), (unfused.kernels, m.kernels)
np.testing.assert_allclose(unfused.run({"image": image})["probs"], probs, rtol=1e-5, atol=1e-7)
with tessel.load(m.export(tmp + "/tiny.so")) as lib:
    np.testing.assert_allclose(lib.run({"image": image})["probs"], probs, rtol=1e-6, atol=1e-8)
assert "Conv" in tessel.inspect(model)
result = tessel.check(model, per_kernel=True, input_shapes={"image": (1, 1, 28, 28)})
assert result.passed and result.failures == 0 and "check passed" in result.report, result.report
report = tessel.fusion_report(model, policies=["none", "default"], threads=1, repeat=2,
                               input_shapes={"image": (1, 1, 28, 28)}, output_dir=tmp + "/report")
assert [p["policy"] for p in report["policies"]] == ["none", "default"], report["policies"]
assert report["policies"][1]["kernels_per_inference"] < report["policies"][0]["kernels_per_inference"]
import os
assert sorted(os.listdir(tmp + "/report")) == ["report.html", "report.json", "report.md"]
def fails(fn, message):
    try:
        fn()
    except tessel.TesselError as e:
        assert message in str(e), (message, str(e))
        return
    raise AssertionError("no error: " + message)
shape = {"image": (1, 1, 28, 28)}
tuned = tessel.tune(model, log=tmp + "/tiny.jsonl", trials=12, threads=1, input_shapes=shape)
# The model's 6 tasks and those only the convs' other layouts have (how many depends on the vector width).
alternatives = [t["alternative_only"] for t in tuned["tasks"]].count(True)
assert tuned["trials"] == 12 and not tuned["interrupted"] and alternatives >= 1, tuned
assert len(tuned["tasks"]) == 6 + alternatives, tuned
assert len(tuned["layouts"]) == 2 and all(len(l["measured"]) >= 2 for l in tuned["layouts"]), tuned["layouts"]
assert all(t["default_ms"] > 0 and t["applied_ms"] <= t["default_ms"] for t in tuned["tasks"]), tuned["tasks"]
check = tuned["in_model"]
assert check["default_ms"] > 0 and check["tuned_ms"] > 0 and 0 <= check["left_out"] <= check["checked"], check
assert sum(t["left_out"] for t in tuned["tasks"]) <= check["left_out"], tuned["tasks"]
more = tessel.tune(model, log=tmp + "/tiny.jsonl", trials=16, threads=1, input_shapes=shape, resume=True)
assert more["trials"] == 16, more
fast = tessel.compile(model, input_shapes=shape, tuning_log=tmp + "/tiny.jsonl")
np.testing.assert_allclose(fast.run({"image": image})["probs"], probs, rtol=1e-4, atol=1e-6)
assert tessel.check(model, input_shapes=shape, tuning_log=tmp + "/tiny.jsonl").passed
fails(lambda: tessel.tune(model, log=tmp + "/tiny.jsonl", trials=20, threads=1, input_shapes=shape),
      "pass --resume")
by_measure = tessel.tune(model, log=tmp + "/fusion.jsonl", trials=10, threads=1, input_shapes=shape, fusion="tuned",
                         layouts="default")
assert by_measure["layouts"] == [], by_measure
assert len(by_measure["fusion"]) == 1 and by_measure["fusion"][0]["default_ops"] == "Flatten+Gemm | Softmax", by_measure
assert [t["alternative_only"] for t in by_measure["tasks"]].count(True) == 1, by_measure["tasks"]
fused = tessel.compile(model, input_shapes=shape, fusion="tuned", tuning_log=tmp + "/fusion.jsonl")
np.testing.assert_allclose(fused.run({"image": image})["probs"], probs, rtol=1e-4, atol=1e-6)
fails(lambda: tessel.compile(model, input_shapes=shape, fusion="tuned"), "decided by a tuning log")
decided = tessel.fusion_report(model, policies=["default", "tuned"], repeat=3, input_shapes=shape,
                               tuning_log=tmp + "/fusion.jsonl")
assert [p["policy"] for p in decided["policies"]] == ["default", "tuned"], decided["policies"]
fails(lambda: tessel.compile(model, input_shapes=shape, tuning_log=tmp + "/none.jsonl"), "none.jsonl")
fails(lambda: tessel.compile(tmp + "/none.onnx"), "none.onnx")
fails(lambda: tessel.compile(model, fusion="greedy", input_shapes={"image": (1, 1, 28, 28)}), "unknown fusion policy")
fails(lambda: tessel.compile(model, target="llvm -mcpu=nocpu"), "unknown CPU 'nocpu'")
fails(lambda: tessel.compile(model), "lowering needs static shapes")
fails(lambda: m.run({"image": image.astype(np.float64)}), "expected dtype float32, got float64")
fails(lambda: m.run({}), "no value for input 'image'")
fails(lambda: m.run({"image": image, "extra": image}), "takes 1 inputs, got 2")
fails(lambda: m.export(tmp + "/m.onnx"), "not an ONNX model")
fails(lambda: tessel.fusion_report(model, policies=["greedy"], input_shapes={"image": (1, 1, 28, 28)}),
      "unknown fusion policy")
print("driver from", tessel.__file__, "compiled, ran, exported, loaded, checked, fusion-reported and tuned", model)
PY
