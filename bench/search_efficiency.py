"""Search efficiency: how many trials the cost-model-guided search and random search take to
reach 95% of the best throughput either found, on single-op models (GEMM 1024^3 and ResNet-18's
3x3 convolutions). Each op is tuned with `tessel tune --search model` and `--search random` for
the same trials and seeds; the logs' measured times give each trial's best-so-far.

    ~/.cache/tessel/venv/bin/python bench/search_efficiency.py [--ops gemm_1024,conv_64_56,conv_256_14] \\
        [--trials 100] [--seeds 0,1] [--threads 1]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO, table  # noqa: E402
import op_bench  # noqa: E402


def best_so_far(log: str) -> list[float]:
    """After each trial, the fastest median time measured so far (infinity before the first)."""
    out, best = [], float("inf")
    with open(log) as f:
        for line in f:
            record = json.loads(line)
            if not record["error"]:
                best = min(best, statistics.median(record["times_ms"]))
            out.append(best)
    return out


def trials_to_reach(curve: list[float], target_ms: float) -> int | None:
    for trial, ms in enumerate(curve, 1):
        if ms <= target_ms:
            return trial
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default=os.path.join(REPO, "build", "src", "cli", "tessel"))
    ap.add_argument("--ops", default="gemm_1024,conv_64_56,conv_256_14")
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    rows = []
    seeds = [int(s) for s in args.seeds.split(",")]
    with tempfile.TemporaryDirectory() as work:
        for name in args.ops.split(","):
            op = next(o for o in op_bench.OPS if o.name == name)
            model, _ = op_bench.write_op_model(op, work)
            curves = {}
            for search in ("model", "random"):
                for seed in seeds:
                    log = os.path.join(work, f"{name}.{search}.{seed}.jsonl")
                    subprocess.run([args.tessel, "tune", model, "--log", log, "--trials", str(args.trials),
                                    "--threads", str(args.threads), "--search", search, "--seed", str(seed)],
                                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    curves[(search, seed)] = best_so_far(log)
                    print(f"{name} {search} seed {seed}: {len(curves[(search, seed)])} trials, best "
                          f"{curves[(search, seed)][-1]:.4f} ms", file=sys.stderr)
            best = min(c[-1] for c in curves.values())
            target = best / 0.95
            reach = {s: [trials_to_reach(curves[(s, seed)], target) for seed in seeds] for s in ("model", "random")}

            def mean_trials(values: list[int | None]) -> str:
                got = [v for v in values if v is not None]
                missed = len(values) - len(got)
                return (f"{statistics.mean(got):.0f}" if got else "-") + (f" ({missed} never)" if missed else "")

            m = [v for v in reach["model"] if v is not None]
            r = [v for v in reach["random"] if v is not None]
            ratio = f"{statistics.mean(m) / statistics.mean(r):.2f}" if m and r else "-"
            rows.append([name, f"{best:.4f}", f"{op.gflop / (best / 1e3):.1f}", mean_trials(reach["model"]),
                         mean_trials(reach["random"]), ratio])
    print(table(["op", "best ms", "GFLOP/s", "trials to 95% (model)", "trials to 95% (random)", "model/random"],
                rows))
    print(f"{args.trials} trials per search, seeds {args.seeds}, {args.threads} thread(s); a search space smaller "
          "than the trials is exhausted by both")
    print("command: bench/search_efficiency.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
