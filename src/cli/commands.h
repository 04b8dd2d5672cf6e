// The subcommands of `tessel`, each with its help text.
#pragma once

#include "src/cli/args.h"

namespace tessel::cli {

int cmd_inspect(Args& args);
int cmd_run(Args& args);
int cmd_conformance(Args& args);
int cmd_lower(Args& args);
int cmd_version(Args& args);

inline constexpr const char* kInspectHelp =
    R"(usage: tessel inspect MODEL.onnx [--input-shape NAME=DxDxD ...] [--print]

Prints the op histogram, the inputs and outputs with their shapes, the
parameter count and bytes, and the FLOPs of each node and in total.
  --input-shape NAME=1x3x224x224   bind the symbolic dimensions of an input
  --print                          also print the graph IR
  --verify                         run the graph verifier after every pass
  --print-after-all                print the graph IR after every pass
)";

inline constexpr const char* kRunHelp =
    R"(usage: tessel run MODEL.onnx --reference|--tir [--fusion none|simple] [--inputs DIR]
                  [--out DIR] [--seed S] [--input-shape NAME=DxDxD ...]

Runs the model with the reference executor (the naive, obviously-correct
oracle that compiled models are checked against), or lowered to the tensor
IR and run on the tensor IR interpreter.
  --reference     run on the reference executor
  --tir           run on the tensor IR interpreter (needs static shapes)
  --fusion F      the groups --tir lowers: none (one per node, default) or simple
  --inputs DIR    input_0.pb, input_1.pb, ... in graph-input order (the
                  onnx-node layout), or <input name>.npy; without it, seeded
                  random inputs (floats in [-1, 1), integers in [0, 4))
  --out DIR       write each output as <output name>.npy (the mapping is printed)
  --seed S        seed of the random inputs (default 0)
  --input-shape NAME=1x3x224x224   bind the symbolic dimensions of an input
  --verify                         run the graph verifier after every pass
)";

inline constexpr const char* kConformanceHelp =
    R"(usage: tessel conformance DIR [--list FILE] [--target reference|tir] [--fusion none|simple]
                          [--timeout SECONDS]

Runs ONNX operator conformance cases: each case folder in DIR holds model.onnx
and test_data_set_*/{input,output}_*.pb. Each case runs in a child process, is
compared with the ONNX backend's tolerances (rtol 1e-3, atol 1e-7), prints one
line, and the run closes with "N passed, N failed". Exit code 1 if any failed.
  --list FILE     case names, one a line (default: every case folder in DIR)
  --target T      reference: the reference executor; tir: lower the graph to
                  the tensor IR and run it on the tensor IR interpreter
                  (compiled targets come with their backends)
  --fusion F      how the tir target groups nodes into PrimFuncs: none (one
                  per node, the default) or simple (an anchor op with its
                  elementwise consumers and leading data movement)
  --timeout S     per-case limit in seconds (default 120)
)";

inline constexpr const char* kLowerHelp =
    R"(usage: tessel lower MODEL.onnx [--input-shape NAME=DxDxD ...] [--fusion none|simple]
                    [--node NAME] [--print]

Groups the model's nodes into PrimFuncs and lowers each group to the tensor
IR. Prints each group's nodes, its function signature (parameters are the
values crossing the group's boundary) and its blocks.
  --input-shape NAME=1x3x224x224   bind the symbolic dimensions of an input
                                   (lowering needs static shapes)
  --fusion F      none: one group per node (default); simple: an anchor op
                  (conv, matmul, pool, reduction, ...) with the chain of
                  elementwise ops that consume it and the data movement that
                  feeds it
  --node NAME     only the group that holds node NAME
  --print         also print each PrimFunc
  --verify                         run the graph verifier after every pass
)";

inline constexpr const char* kVersionHelp = R"(usage: tessel version

Prints the version of Tessel and of LLVM, NVRTC, XGBoost and protobuf it was
built with, and the host CPU as LLVM detects it.
)";

}  // namespace tessel::cli
