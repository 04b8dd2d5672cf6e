// The subcommands of `tessel`, each with its help text.
#pragma once

#include "ir/core/tensor.h"
#include "src/cli/args.h"
#include "src/driver/compile_model.h"
#include "src/driver/pipeline.h"

namespace tessel::cli {

int cmd_inspect(Args& args);
int cmd_run(Args& args);
int cmd_conformance(Args& args);
int cmd_lower(Args& args);
int cmd_version(Args& args);
int cmd_ops(Args& args);
int cmd_compile(Args& args);
int cmd_check(Args& args);
int cmd_target(Args& args);
int cmd_roofline(Args& args);
int cmd_fusion_report(Args& args);
int cmd_tasks(Args& args);
int cmd_tune(Args& args);         // tune_commands.cpp
int cmd_tune_report(Args& args);

// Shared by the commands.
std::string single_model(Args& args, const char* command);
driver::StageOptions stage_options(Args& args);
driver::PipelineOptions pipeline_options(Args& args);
// --fusion, --schedule, --target (-mcpu, -mattr), --tuning-log; given: whether
// any was on the command line. The stages' options come from the pipeline's.
driver::CompileOptions compile_options(Args& args, const driver::PipelineOptions& pipeline, bool* given = nullptr);
void print_output_summary(const std::string& name, const Tensor& t);
int run_compiled(Args& args, const driver::PipelineOptions& pipeline);

// The fusion policies as every command's --fusion help describes them.
#define TESSEL_FUSION_POLICIES_HELP                                                 \
  "                  none: one kernel per node; injective: chains of\n"           \
  "                  elementwise and data-movement ops; simple: an anchor op\n"   \
  "                  (conv, matmul, pool, reduction) with its single-consumer\n"  \
  "                  elementwise chain and the data movement feeding it;\n"       \
  "                  default: TVM's post-dominator fusion, also across values\n"  \
  "                  with several consumers (conv + x * sigmoid(x)); aggressive:\n" \
  "                  default, plus row-wise reductions and normalisations\n"      \
  "                  (Softmax, LayerNorm, global pooling) with their\n"           \
  "                  neighbours and contractions that read one value (sibling\n"  \
  "                  convs, attention's projections) in one kernel; tuned\n"      \
  "                  (compile, run, check with --tuning-log): default's groups,\n" \
  "                  or aggressive's where tune --fusion tuned measured them\n"    \
  "                  faster\n"

inline constexpr const char* kInspectHelp =
    R"(usage: tessel inspect MODEL.onnx [--input-shape NAME=DxDxD ...] [--print]

Prints the op histogram, the inputs and outputs with their shapes, the
parameter count and bytes, and the FLOPs of each node and in total.
  --input-shape NAME=1x3x224x224   bind the symbolic dimensions of an input
  --print                          also print the graph IR
  --verify                         run the graph verifier after every pass
  --print-after STAGE[,STAGE]      print the graph IR after those stages (all: every one)
  --time-passes                    each stage's time, on stderr
)";

inline constexpr const char* kRunHelp =
    R"(usage: tessel run MODEL.so|MODEL.onnx [--inputs DIR] [--out DIR] [--seed S]
                  [--repeat N] [--threads N] [--profile] [--trace FILE]
                  [--fusion none|injective|simple|default|aggressive|tuned] [--schedule default|none] [--target llvm]
       tessel run MODEL.onnx --reference|--tir [--fusion none|injective|simple|default|aggressive] [--inputs DIR] [--out DIR]

Runs a compiled model: a model.so written by `tessel compile`, or an ONNX
model compiled in memory first (the options of `tessel compile` apply). With
--reference, runs the ONNX model on the reference executor (the naive,
obviously-correct oracle compiled models are checked against); with --tir,
lowered to the tensor IR on the tensor IR interpreter.
  --inputs DIR    input_0.pb, input_1.pb, ... in input order (the onnx-node
                  layout), or <input name>.npy; without it, seeded random
                  inputs (floats in [-1, 1), integers in [0, 4))
  --out DIR       write each output as <output name>.npy (the mapping is printed)
  --seed S        seed of the random inputs (default 0)
  --repeat N      after 3 warm-up runs, time N runs and print the median, min
                  and max latency
  --threads N     threads of the model's thread pool (default:
                  TESSEL_NUM_THREADS, else every core)
  --profile       each kernel's share of the time, median time, FLOPs, bytes
                  and GFLOP/s, and the end-to-end median (over max(N, 10) runs);
                  on this machine's roofline (`tessel roofline`), its FLOP per
                  byte, % of the bound at that intensity, and memory- or
                  compute-bound (a kernel whose bytes stay in cache can pass
                  100%: the bandwidth roof is main memory's)
  --trace FILE    three more runs as a timeline in the Chrome trace format
                  (Perfetto, chrome://tracing): each kernel on the calling
                  thread's track, each chunk of its parallel loops on the
                  track of the thread that ran it
  --input-shape NAME=1x3x224x224   bind the symbolic dimensions of an input
  --verify                         run the graph verifier after every pass
)";

inline constexpr const char* kCompileHelp =
    R"(usage: tessel compile MODEL.onnx -o OUT.so [--target "llvm [-mcpu=CPU] [-mattr=+f,-g] [-fmas-in-flight=N]"]
                      [--fusion none|injective|simple|default|aggressive|tuned] [--schedule default|none] [--input-shape NAME=DxD ...]
                      [--channels-last none|depthwise|all] [--tuning-log FILE] [--print-tir] [--print-llvm]
                      [--print-cuda] [--qdq float|integer]

Compiles the model for a CPU through LLVM into a self-contained shared
library: its kernels, execution plan (static memory plan) and weights, with
the C ABI of include/tessel/runtime.h. Load it from C (link it), from Python
(`tessel.load("OUT.so")`) or run it with `tessel run OUT.so`.
  --target T      llvm (the host CPU as LLVM detects it); -mcpu= and -mattr=
                  override the CPU and its features (also as separate options);
                  -fmas-in-flight=N the vector FMAs one core overlaps (measured
                  on this host; the register tiles keep about three times as
                  many accumulators); -parallel-cycles=N the estimated
                  one-core cycles below which a kernel stays on one thread
                  (default 4096: waking the pool costs microseconds on a
                  virtual machine); cuda [-arch=sm_NN] (CUDA C compiled by
                  NVRTC, sm_90 unless named; default GPU schedules: a thread
                  per output element); cuda-emulated (the same CUDA C compiled
                  as C++ and run on this CPU, for run and check without a
                  GPU); `tessel target T` shows what a spec means
  --fusion F      how nodes group into kernels (the policy named default
                  unless given):
)" TESSEL_FUSION_POLICIES_HELP R"(  --schedule S    default (hand-written CPU schedules: tiled, vectorized,
                  parallel) or none (loops as lowered, for comparison)
  --channels-last P  which activations the kernels keep channels-last
                  ([N, H, W, C]) between them, where every op making and
                  reading them does so in order: depthwise (default: the
                  regions a depthwise conv reads), all (every such region,
                  with or without a depthwise conv) or none; the model's
                  inputs and outputs keep their layout
                  (also for run and check)
  --qdq Q         how a QDQ model's Conv and MatMul run between their
                  DequantizeLinear and QuantizeLinear: float (default: as
                  written, on dequantized values) or integer (folded into
                  QLinearConv / QLinearMatMul, exact integer sums, as ONNX
                  Runtime folds them; slower than float here until the
                  integer kernels use the CPU's 8-bit dot products); the two
                  agree within a quantization step or two (also for run and
                  check)
  --tuning-log F  the fastest schedule `tessel tune` measured for each task
                  (also for run and check); other kernels keep the defaults
  --print-tir     print each kernel's tensor IR as scheduled and flattened
  --print-llvm    print the optimised LLVM IR of the module
  --print-cuda    print the CUDA C of the module (--target cuda or
                  cuda-emulated; -o may then be left out: a model library
                  for the GPU is not built yet)
  --input-shape NAME=1x3x224x224   bind the symbolic dimensions of an input
  --sequence-length NAME=N         a sequence input's length: its elements
                                   are the inputs NAME[0] ... NAME[N-1] (their
                                   shapes bound as --input-shape "NAME[0]=...")
                                   and a sequence output's are OUT[0], ...
  --empty-optional NAME            an optional input given nothing (any other
                                   optional input holds a value)
  --verify                         run the IR verifier after every stage
  --print-after STAGE[,STAGE]      print the IR after those stages (all: every
                                   stage; `tessel compile --help` lists them)
  --time-passes                    each stage's time, on stderr

Stages, in order: import, eliminate_dead_code, pretranspose_gemm_weights,
store_channels_last, pack_matmul_weights, pack_conv_weights, fusion, lower,
schedule, flatten_blocks, compact_buffers, partition_vector_loops, plan,
codegen, export.
)";

inline constexpr const char* kCheckHelp =
    R"(usage: tessel check MODEL.onnx [--per-kernel] [--seed S] [--tolerance T]
                    [--fusion none|injective|simple|default|aggressive|tuned] [--schedule default|none] [--target llvm]

Compiles the model in memory, runs it and the reference executor on the same
seeded inputs, and prints for each output the max absolute and relative error
(max|ours - reference| / max|reference|) and the verdict. Exit code 1 if any
output fails.
  --per-kernel    also check every kernel on the reference's values of its
                  inputs, naming the first kernel that diverges
  --tolerance T   the largest relative error that passes (default 1e-4)
  --seed S        seed of the random inputs (default 0)
  --input-shape NAME=1x3x224x224   bind the symbolic dimensions of an input
  --verify                         run the IR verifier after every stage
  --print-after STAGE[,STAGE]      print the IR after those stages (all: every
                                   stage; `tessel compile --help` lists them)
  --time-passes                    each stage's time, on stderr
)";

inline constexpr const char* kConformanceHelp =
    R"(usage: tessel conformance DIR [--list FILE] [--target reference|tir|llvm|cuda|cuda-emulated] [--fusion none|injective|simple|default|aggressive]
                          [--timeout SECONDS] [--sample-knobs SEED]

Runs ONNX operator conformance cases: each case folder in DIR holds model.onnx
and test_data_set_*/{input,output}_*.pb. Each case runs in a child process, is
compared with the ONNX backend's tolerances (rtol 1e-3, atol 1e-7), prints one
line, and the run closes with "N passed, N failed". Exit code 1 if any failed.
  --list FILE     case names, one a line (default: every case folder in DIR)
  --target T      reference: the reference executor; tir: lower the graph to
                  the tensor IR and run it on the tensor IR interpreter; llvm:
                  compile it for this CPU (default schedules) and run it;
                  cuda: compile it for the GPU (default GPU schedules, CUDA
                  C compiled by NVRTC for sm_90) and run the scheduled tensor
                  IR on the interpreter; cuda-emulated: compile the same CUDA
                  C as C++ for this CPU and run it (thread blocks emulated)
  --fusion F      how the compiling targets group nodes into kernels
                  (default: none):
)" TESSEL_FUSION_POLICIES_HELP R"(  --timeout S     per-case limit in seconds (default 120)
  --sample-knobs SEED   llvm, cuda, cuda-emulated: each kernel's schedule
                  drawn from the tuner's search space (the default
                  schedule's knobs at random) instead of the default: every
                  point of it must be correct
)";

inline constexpr const char* kLowerHelp =
    R"(usage: tessel lower MODEL.onnx [--input-shape NAME=DxDxD ...] [--fusion none|injective|simple|default|aggressive]
                    [--node NAME] [--print]

Groups the model's nodes into PrimFuncs and lowers each group to the tensor
IR. Prints each group's nodes, its function signature (parameters are the
values crossing the group's boundary) and its blocks.
  --input-shape NAME=1x3x224x224   bind the symbolic dimensions of an input
                                   (lowering needs static shapes)
  --fusion F      how nodes group (default: none):
)" TESSEL_FUSION_POLICIES_HELP R"(  --node NAME     only the group that holds node NAME
  --print         also print each PrimFunc
  --verify                         run the graph verifier after every pass
)";

inline constexpr const char* kTargetHelp =
    R"(usage: tessel target [SPEC]

Parses and checks a target spec once, as compile, run and check do, and prints
what every stage reads of it: kind, CPU, features, vector width, the FMAs
one core overlaps (measured once per machine, kept in
~/.cache/tessel/machine.json), cores, caches and the parallel threshold (llvm);
architecture, threads per block, shared memory and registers (cuda). Exit
code 2, with the reason, for a target this build or this machine cannot
serve: an unknown CPU or feature, a feature this CPU lacks, or cuda without
NVRTC.
  SPEC   "llvm" (the default: this CPU), "llvm -mcpu=znver3 -mattr=+avx2,-avx512f",
         "llvm -mcpu=sapphirerapids -fmas-in-flight=8", "llvm -parallel-cycles=1024", "cuda",
         "cuda -arch=sm_80"
)";

inline constexpr const char* kFusionReportHelp =
    R"(usage: tessel fusion-report MODEL.onnx -o DIR [--policies none,injective,simple,default,aggressive,tuned]
                            [--tuning-log FILE] [--threads N] [--repeat N] [--seed S] [--target llvm] [--input-shape ...]

Compiles the model once per fusion policy, profiles each on the same seeded
inputs (their outputs checked against each other), and writes DIR/report.md,
DIR/report.json and DIR/report.html (one page, opens from disk): per policy
the kernels (= dispatches) per inference, end-to-end median and spread, time
in kernels and outside them (per dispatch), bytes moved between kernels and
what fusion removed of them, peak intermediate memory; per kernel its time,
FLOPs, bytes, FLOP per byte, GFLOP/s, GB/s and place on this machine's
roofline (`tessel roofline`); the fused groups that gained or lost most
against their nodes as kernels of their own; a bar chart of where each
policy's time went and a roofline plot of every kernel of every policy.
  --policies LIST   fusion policies to compare (default: the first five; with
                    --tuning-log also tuned)
  --tuning-log FILE every policy's kernels with the schedules `tessel tune`
                    found for their tasks, and policy tuned with the log's
                    fusion decisions (`tessel tune --fusion tuned`)
  --threads N       threads of the model's pool (default: TESSEL_NUM_THREADS, else every core)
  --repeat N        profiled runs per policy (default 30)
)";

inline constexpr const char* kTasksHelp =
    R"(usage: tessel tasks MODEL.onnx [--fusion POLICY] [--target llvm] [--threads N] [--repeat N] [--seed S]
                    [--input-shape NAME=DxD ...]

The tuner's tasks of the model: one per distinct fused group (its key is the
structural hash of the group's lowered function, so repeated blocks are one
task), with how many times an inference runs it, its FLOPs and bytes per run,
the default schedule's median time per run (the model compiled in memory and
profiled on seeded random inputs) and its share of the time in kernels, the
costliest first. A tuning session spends its trials where this table says
the time goes.
  --fusion F      how nodes group into kernels (the tasks are the groups; default: default)
  --threads N     threads of the model's pool (default: TESSEL_NUM_THREADS, else every core)
  --repeat N      profiled runs (default 20)
)";

inline constexpr const char* kRooflineHelp =
    R"(usage: tessel roofline [--target SPEC] [--remeasure]

This machine's roofline: peak f32 GFLOP/s (an FMA micro-kernel generated for
the target's vector width) and memory bandwidth in GB/s (a STREAM triad over
arrays larger than the caches), on one thread and on every core, and the
ridge point (FLOP per byte) where a kernel turns from memory- to
compute-bound. Measured once (a few seconds) and cached per machine in
${TESSEL_CACHE:-~/.cache/tessel}/roofline.json; `tessel run --profile`
places every kernel on it.
  --target SPEC   "llvm" (default: this CPU), or a CPU this one can run, e.g.
                  "llvm -mcpu=x86-64-v3" for the peak of AVX2 code here
  --remeasure     measure again and replace the cached figures
)";

inline constexpr const char* kOpsHelp = R"(usage: tessel ops

Prints, as Markdown, the ONNX operators (default domain) the importer accepts,
each with the opsets it is accepted at and whether it becomes one graph op or
a composition of them, then the operators it refuses with the reason. The
README's table is this output (scripts/update_readme_ops.sh).
)";

inline constexpr const char* kVersionHelp = R"(usage: tessel version

Prints the version of Tessel and of LLVM, NVRTC, XGBoost and protobuf it was
built with, and the host CPU as LLVM detects it.
)";

}  // namespace tessel::cli
