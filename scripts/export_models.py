#!/usr/bin/env python3
# Exports the model-test networks (ResNet-18, MobileNetV2, SqueezeNet 1.1, one transformer encoder
# layer) with seeded random weights to ONNX opset 17 in ${TESSEL_CACHE:-~/.cache/tessel}/models,
# with manifest.json (inputs, outputs); cached. Run with the venv's python (scripts/setup_python_env.sh).
import argparse
import json
import os
import sys
import time

# torch, torchvision and onnx are imported only when a model must be exported (~4 s), so that
# a fully cached run returns at once.

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_op_models  # noqa: E402 (onnx.helper models, no torch)

BUILT = build_op_models.BUILDERS
OPSET = 17
# Bump when the export procedure changes: entries of an older version are exported again.
EXPORT_VERSION = 1
SEED = 20261202


def recalibrate_batchnorm(model, shape, seed, batches=4, batch_size=8):
    """Re-estimate every BatchNorm's running mean/var on random data (train-mode forward passes).

    Freshly initialised BatchNorm layers have mean 0 / var 1 while the real activations of a
    random net shrink layer after layer, so in eval mode deep BN nets output ~1e-9: every
    comparison would pass trivially. momentum=None makes the estimate a plain average.
    """
    import torch
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return 0
    gen = torch.Generator().manual_seed(seed + 1)
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn((batch_size,) + tuple(shape[1:]), generator=gen))
    for bn in bns:
        bn.momentum = 0.1
    model.eval()
    return len(bns)


def make_vision(name):
    def build():
        import torchvision
        return getattr(torchvision.models, name)(weights=None)
    return build


def make_encoder_layer():
    import torch
    return torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072,
                                            dropout=0.0, batch_first=True)


# name -> (builder, input name, input shape, output name)
MODELS = {
    "resnet18": (make_vision("resnet18"), "input", [1, 3, 224, 224], "logits"),
    "mobilenet_v2": (make_vision("mobilenet_v2"), "input", [1, 3, 224, 224], "logits"),
    "squeezenet1_1": (make_vision("squeezenet1_1"), "input", [1, 3, 224, 224], "logits"),
    "transformer_encoder_layer": (make_encoder_layer, "src", [1, 128, 768], "out"),
}
# Exported only when named: CNNs that no heuristic of the compiler was fitted to, with SiLU and
# hard-swish activations and squeeze-and-excitation gates (the fusion benchmark's unseen models).
EXTRA_MODELS = {
    "efficientnet_b0": (make_vision("efficientnet_b0"), "input", [1, 3, 224, 224], "logits"),
    "mobilenet_v3_large": (make_vision("mobilenet_v3_large"), "input", [1, 3, 224, 224], "logits"),
    "regnet_y_400mf": (make_vision("regnet_y_400mf"), "input", [1, 3, 224, 224], "logits"),
    # Held out: schedule changes fitted on the models above are checked on these.
    "mnasnet1_0": (make_vision("mnasnet1_0"), "input", [1, 3, 224, 224], "logits"),
    "shufflenet_v2_x1_0": (make_vision("shufflenet_v2_x1_0"), "input", [1, 3, 224, 224], "logits"),
    "mobilenet_v3_small": (make_vision("mobilenet_v3_small"), "input", [1, 3, 224, 224], "logits"),
    "efficientnet_b1": (make_vision("efficientnet_b1"), "input", [1, 3, 240, 240], "logits"),
    # Dense 3x3 convs on small planes, in other shapes than ResNet's.
    "googlenet": (make_vision("googlenet"), "input", [1, 3, 224, 224], "logits"),
    "densenet121": (make_vision("densenet121"), "input", [1, 3, 224, 224], "logits"),
    # Grouped convs with several channels per group, in other widths than RegNetY's.
    "regnet_x_400mf": (make_vision("regnet_x_400mf"), "input", [1, 3, 224, 224], "logits"),
    "regnet_y_800mf": (make_vision("regnet_y_800mf"), "input", [1, 3, 224, 224], "logits"),
    "resnext50_32x4d": (make_vision("resnext50_32x4d"), "input", [1, 3, 224, 224], "logits"),
}


def export_one(name, out_dir):
    import onnx
    import torch
    import torchvision
    builder, in_name, shape, out_name = {**MODELS, **EXTRA_MODELS}[name]
    torch.manual_seed(SEED)
    model = builder()
    model.eval()
    n_bn = recalibrate_batchnorm(model, shape, SEED)
    example = torch.randn(shape, generator=torch.Generator().manual_seed(SEED + 2))
    with torch.no_grad():
        ref = model(example)
    path = os.path.join(out_dir, name + ".onnx")
    tmp = path + ".tmp"
    # Not under no_grad: with autograd off, the encoder layer takes its fused "fast path"
    # (aten::_transformer_encoder_layer_fwd), which has no ONNX export.
    torch.onnx.export(model, (example,), tmp, opset_version=OPSET, input_names=[in_name],
                      output_names=[out_name], do_constant_folding=True)
    m = onnx.load(tmp)
    onnx.checker.check_model(m)
    os.replace(tmp, path)
    ops = sorted({n.op_type for n in m.graph.node})
    return {
        "file": name + ".onnx",
        "inputs": [{"name": in_name, "shape": shape, "dtype": "float32"}],
        "outputs": [o.name for o in m.graph.output],
        "opset": OPSET,
        "seed": SEED,
        "export_version": EXPORT_VERSION,
        "batchnorm_recalibrated": n_bn,
        "ops": ops,
        "torch_max_abs_output": float(ref.abs().max()),
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
    }


# Written after each model, so an interrupted run keeps what it finished.
def write_manifest(manifest, manifest_path):
    with open(manifest_path + ".tmp", "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
    os.replace(manifest_path + ".tmp", manifest_path)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    cache = os.environ.get("TESSEL_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "tessel"))
    ap.add_argument("--out", default=os.path.join(cache, "models"), help="output folder")
    ap.add_argument("--force", action="store_true", help="export again even if cached")
    ap.add_argument("models", nargs="*", default=list(MODELS) + list(BUILT),
                    help="subset of: " + ", ".join(list(MODELS) + list(BUILT)) + "; or by name: "
                    + ", ".join(EXTRA_MODELS))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    manifest = {}
    if os.path.exists(manifest_path):
        try:
            with open(manifest_path) as f:
                manifest = json.load(f)
        except (OSError, ValueError):
            manifest = {}
    total = time.monotonic()
    for name in args.models:
        if name not in MODELS and name not in EXTRA_MODELS and name not in BUILT:
            known = ", ".join(list(MODELS) + list(BUILT) + list(EXTRA_MODELS))
            sys.exit(f"export_models: unknown model {name!r} (known: {known})")
        entry = manifest.get(name)
        path = os.path.join(args.out, name + ".onnx")
        if (not args.force and entry and entry.get("export_version") == EXPORT_VERSION
                and os.path.exists(path)):
            print(f"export_models: {name}: cached ({path})")
            continue
        t0 = time.monotonic()
        if name in BUILT:
            inputs, outputs = build_op_models.build(name, path)
            manifest[name] = {"file": name + ".onnx", "inputs": inputs, "outputs": [o["name"] for o in outputs],
                              "export_version": EXPORT_VERSION, "built_with": "onnx.helper"}
            write_manifest(manifest, manifest_path)
            print(f"export_models: {name}: built in {time.monotonic() - t0:.1f} s -> {path}")
            continue
        import torch
        torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
        entry = export_one(name, args.out)
        entry["export_seconds"] = round(time.monotonic() - t0, 2)
        manifest[name] = entry
        write_manifest(manifest, manifest_path)
        print(f"export_models: {name}: exported in {entry['export_seconds']:.1f} s -> {path} "
              f"(input {entry['inputs'][0]['name']} {entry['inputs'][0]['shape']}, "
              f"{entry['batchnorm_recalibrated']} BatchNorms re-estimated, "
              f"torch max|out| {entry['torch_max_abs_output']:.3g}, ops {' '.join(entry['ops'])})")
    print(f"export_models: done in {time.monotonic() - total:.1f} s; manifest {manifest_path}")


if __name__ == "__main__":
    main()
