// The ONNX operators the importer accepts, for `tessel ops` and the README's
// table (generated from here, so that it cannot drift from the code).
#pragma once

#include <string>
#include <vector>

namespace tessel::onnx_frontend {

struct OpSupport {
  std::string op;
  int first_opset = 0;    // the first opset of the default domain that has it (at least kMinOpset)
  bool composed = false;  // imported as a composition of graph ops rather than one op
  bool structural = false;  // a sequence or optional op, resolved while importing
};

// Sorted by name.
std::vector<OpSupport> supported_ops();

struct OpGap {
  std::string op;
  std::string reason;
};

// The operators of the default domain that the importer refuses, with why.
std::vector<OpGap> unsupported_ops();

// Names the importer accepts that are neither in the ONNX library nor in the
// table of newer operators: the graph IR's own ops (a test keeps this list
// to those, so that a new ONNX operator cannot be left out of the table).
std::vector<std::string> unlisted_accepted_ops();

// Markdown: a table of supported_ops(), then the list of unsupported_ops().
std::string ops_markdown();

}  // namespace tessel::onnx_frontend
