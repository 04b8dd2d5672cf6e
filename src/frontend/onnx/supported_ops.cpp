// What `tessel ops` prints: the default-domain operators the importer maps to
// the graph IR (the op registry's and the adapters'), each with the first
// opset that has it, and those it refuses with the reason.
#include "src/frontend/onnx/supported_ops.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "ir/graph/op_registry.h"
#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/importer.h"

namespace tessel::onnx_frontend {

namespace {

// Operators newer than the ONNX library Tessel builds against, with the opset
// that introduced them; the importer follows their current definition.
const std::map<std::string, int>& newer_operators() {
  // clang-format off: one operator per line
  static const std::map<std::string, int> ops = {
      {"AffineGrid", 20},
      {"Attention", 23},
      {"BitCast", 26},
      {"BitwiseAnd", 18},
      {"BitwiseNot", 18},
      {"BitwiseOr", 18},
      {"BitwiseXor", 18},
      {"CausalConvWithState", 27},
      {"CenterCropPad", 18},
      {"Col2Im", 18},
      {"CumProd", 26},
      {"DeformConv", 19},
      {"Gelu", 20},
      {"GroupNormalization", 18},
      {"LinearAttention", 27},
      {"Mish", 18},
      {"RMSNormalization", 23},
      {"RotaryEmbedding", 23},
      {"Swish", 24},
      {"TensorScatter", 24},
  };
  // clang-format on
  return ops;
}

// The first opset of each default-domain operator the ONNX library knows.
std::map<std::string, int> library_first_opsets() {
  std::map<std::string, int> first;
  for (const onnx::OpSchema& s : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    if (!s.domain().empty() && s.domain() != "ai.onnx") continue;
    auto [it, inserted] = first.emplace(s.Name(), s.SinceVersion());
    if (!inserted) it->second = std::min(it->second, s.SinceVersion());
  }
  return first;
}

// Why the big families are left out; any other gap is not implemented yet.
const std::map<std::string, std::string>& gap_reasons() {
  static const std::map<std::string, std::string> reasons = {
      {"StringNormalizer", "string tensors are not supported"},
      {"RandomNormal", "random generators are not supported: a compiled model is deterministic"},
      {"RandomNormalLike", "random generators are not supported: a compiled model is deterministic"},
      {"RandomUniform", "random generators are not supported: a compiled model is deterministic"},
      {"RandomUniformLike", "random generators are not supported: a compiled model is deterministic"},
      {"Multinomial", "random generators are not supported: a compiled model is deterministic"},
      {"Bernoulli", "random generators are not supported: a compiled model is deterministic"},
  };
  return reasons;
}

bool is_supported_op(const std::string& op) {
  return imports_op(op);
}

}  // namespace

std::vector<OpSupport> supported_ops() {
  std::map<std::string, int> first = library_first_opsets();
  for (const auto& [op, since] : newer_operators()) first.emplace(op, since);
  std::vector<OpSupport> out;
  for (const auto& [op, since] : first)
    if (is_supported_op(op) && since <= kMaxOpset)
      out.push_back({op, std::max(since, kMinOpset), adapters().count(op) > 0,
                     structured_adapters().count(op) > 0 && op != "Identity"});
  return out;
}

std::vector<std::string> unlisted_accepted_ops() {
  std::map<std::string, int> first = library_first_opsets();
  std::set<std::string> accepted;
  for (const auto& [op, adapter] : adapters()) accepted.insert(op);
  for (const auto& [op, adapter] : structured_adapters()) accepted.insert(op);
  for (const std::string& op : graph::OpRegistry::global().names()) accepted.insert(op);
  std::vector<std::string> out;
  for (const std::string& op : accepted)
    if (!first.count(op) && !newer_operators().count(op)) out.push_back(op);
  return out;
}

std::vector<OpGap> unsupported_ops() {
  std::vector<OpGap> out;
  for (const auto& [op, since] : library_first_opsets()) {
    if (is_supported_op(op)) continue;
    auto it = gap_reasons().find(op);
    out.push_back({op, it != gap_reasons().end() ? it->second : "not implemented yet"});
  }
  return out;
}

std::string ops_markdown() {
  std::ostringstream os;
  std::vector<OpSupport> ops = supported_ops();
  os << "| operator | opsets | imported as |\n|---|---|---|\n";
  for (const OpSupport& o : ops)
    os << "| " << o.op << " | " << o.first_opset << "–" << kMaxOpset << " | "
       << (o.structural ? "resolved while importing (sequences, optionals)"
           : o.composed ? "graph ops (a composition)"
                        : "one graph op")
       << " |\n";
  os << "\n"
     << ops.size() << " operators. Not supported (operators of the ONNX library Tessel builds "
     << "against that the importer refuses):\n\n";
  std::map<std::string, std::vector<std::string>> by_reason;
  for (const OpGap& g : unsupported_ops()) by_reason[g.reason].push_back(g.op);
  for (const auto& [reason, names] : by_reason) {
    os << "- " << reason << ":";
    for (size_t i = 0; i < names.size(); ++i) os << (i ? ", " : " ") << names[i];
    os << "\n";
  }
  os << "\nOf the " << kMlDomain << " domain (each a composition of graph ops; the domain's other operators "
     << "are refused):";
  bool first = true;
  for (const auto& [op, adapter] : ml_adapters()) {
    os << (first ? " " : ", ") << op << " (opset " << ml_op_since(op) << " on)";
    first = false;
  }
  for (const char* domain : {kPreviewDomain, kTrainingDomain}) {
    os << "\n\nOf the " << domain << " domain (opset 1, compositions of graph ops):";
    first = true;
    for (const auto& [op, adapter] : *domain_adapters(domain)) {
      os << (first ? " " : ", ") << op;
      first = false;
    }
  }
  os << "\n";
  return os.str();
}

}  // namespace tessel::onnx_frontend
