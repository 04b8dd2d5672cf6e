// The help of the tuning commands (tune_commands.cpp).
#pragma once

namespace tessel::cli {

inline constexpr const char* kTuneHelp =
    R"(usage: tessel tune MODEL.onnx --log FILE [--trials N] [--threads N] [--seed S] [--resume]
                   [--per-round N] [--search model|random] [--cost-model FILE] [--save-cost-model FILE]
                   [--events FILE] [--timeout S] [--repeat N] [--cache-flush l2|memory|none]
                   [--fusion POLICY] [--layouts search|default] [--target llvm|cuda|cuda-emulated]
                   [--no-model-check]

Tunes the model's kernels for this CPU, or for a GPU (--target cuda). The
tasks (`tessel tasks`) are first measured with their default schedules (the
table printed first); then each round the task scheduler picks the task whose
speed-up would lower the estimated end-to-end latency most, its search
proposes candidates (the default schedule's knobs: tile columns and rows,
local accumulation, loop order, unrolling, weight prefetch, a strided window
read in place or padded, chunks per thread) evolved under an XGBoost cost
model trained on what was measured, and each is built, checked against the
default schedule's outputs and timed in a child process. A candidate that
crashes, hangs or computes something else is logged as an error and the
session goes on.
A candidate that measured fast enough to become its task's best is timed
again beside the default schedule, the two run alternately in one process,
and ranks by that ratio (the log's "vs_default"): timed minutes apart, two
schedules also differ by how fast the machine was at each moment.
Every measurement is appended to the log at once (fsync); Ctrl-C stops after
the measurement in flight, and --resume continues from the log.
`tessel compile --tuning-log FILE` builds with the best schedule of each task.
With --fusion tuned the session also decides fusion by measurement: where
default and aggressive group the nodes otherwise, it tunes the kernels of
both, logs a decision per region (aggressive's groups where their kernels
measured faster by the margin a schedule needs) and compile --fusion tuned
--tuning-log FILE applies them.
Each convolution's layout is searched too (--layouts search, the default):
the model is compiled again with each conv in each of its other forms (flat
plane, flat pointwise, channels-last, direct rows), those kernels are tuned
beside the default's, and the log gets a decision per conv (another form
where its kernels measured faster by the same margin), which compile
--tuning-log applies to that conv in any model.
At the end of a CPU session its decisions are checked in the model itself:
the model is compiled with the log and without it, the two run in
alternation in a child process, and each tuned schedule and re-laid-out conv
whose kernels took no less time in place than what they replace is logged as
left out ("in_model" records, which compile --tuning-log follows); the
summary's last line is the model's time both ways as measured there.
On a GPU (--target cuda, needs a GPU and its driver) the candidates are the
default GPU schedule's knobs (a matmul's register tile rows and columns,
threads per block side and reduction step through shared memory; a conv's
register tile of output channels by positions and its threads; threads per
block of the other kernels, threads sharing a reduction), built by NVRTC
and timed by the GPU's events after 256 MiB of device memory is written (the
L2 flushed); conv layouts are not searched. --target
cuda-emulated runs the same search on the CUDA emulator: it tests the session
and the schedules without a GPU, and its times are this CPU's, not a GPU's (its
log is kept apart from cuda's).
  --log FILE          the tuning log (JSON lines); without --resume it must be new or empty
  --trials N          measured candidates in all, the default schedules included (default 1000)
  --threads N         threads the schedules fill and the measurements run on (default: every core)
  --seed S            seed of the search and of the task inputs (default 0)
  --resume            continue the session the log holds
  --per-round N       candidates measured per round (default 8)
  --search S          model: ranked by the cost model (default); random: the
                      baseline that search efficiency is measured against
  --cost-model FILE   start from a saved cost model (warm start)
  --save-cost-model FILE   save the cost model at the end
  --events FILE       append JSON-lines events (start, each round, confirm, end) for tools
  --timeout S         per candidate: build, check and timing (default 10)
  --repeat N          timed runs per candidate, ranked by their median (default 5)
  --fusion POLICY     the grouping whose kernels are tuned (default: default);
                      tuned: default's and aggressive's where they differ
  --layouts L         search (default): each conv's other layouts measured too;
                      default: the default schedule's layouts only
  --no-model-check    skip the check of the decisions in the model at the end
  --cache-flush F     written between timed runs: l2 (default; four times the
                      L2, so that data comes from the last-level cache, as in
                      a model that runs again and again), memory (64 MiB: from
                      DRAM), none; after it, a task's activations (its inputs
                      that are not weights) are read once, since in a model
                      the kernel before has just written them; on a GPU,
                      none writes no device memory between runs
)";

inline constexpr const char* kTuneReportHelp =
    R"(usage: tessel tune-report LOG.jsonl -o DIR

From a tuning log: a per-task table (trials, errors, default and best time,
speed-up, GFLOP/s), the estimated end-to-end latency, the cost model's
pairwise ranking accuracy per round on candidates it had not been trained on,
and the tuning curves: DIR/tasks.csv, DIR/curve.csv (after each trial, each
task's best and the estimated end-to-end latency), DIR/accuracy.csv and
DIR/curve.svg; for a session with --fusion tuned also its decisions (each
region's sides, their times and the choice) and DIR/fusion.csv; for a session
that searched conv layouts its decisions (each conv's measured layouts and the
one chosen) and DIR/layouts.csv; for a session whose decisions were checked
in the model, those left out and DIR/in_model.csv (each decision's last check:
its kernels' time in place with and without it, kept or not).
)";

}  // namespace tessel::cli
