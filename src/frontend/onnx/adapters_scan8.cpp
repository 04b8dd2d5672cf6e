// Scan-8: every state and scan input has a batch axis 0 and the scan inputs
// their scan axis at 1. Each batch entry is a Scan of its own (the entry's
// states and slices, the body imported once per entry), their results
// stacked back along axis 0. The batch must be known while compiling.
// Sequence lengths shorter than the scan axis (whose outputs ONNX pads past
// each sequence's end) are refused; lengths equal to it are what an omitted
// sequence_lens means.
#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/control_flow.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

// Each batch entry imports the body once more: a few bytes of model must not
// ask for thousands of copies.
constexpr int64_t kMaxBatch = 64;

// Every entry of sequence_lens is the whole scan axis, `length`.
void require_whole_sequences(AdaptContext& c, int64_t batch, int64_t length) {
  if (!c.input_or_null(0)) return;
  const Tensor* lens = c.constant_input(0);
  TESSEL_USER_CHECK(lens, c.span()) << "sequence_lens known only at run time is not supported (Scan-8 pads "
                                       "each shorter sequence's outputs); omit it or give a constant";
  TESSEL_USER_CHECK(lens->numel() == batch, c.span())
      << "sequence_lens has " << lens->numel() << " entries for a batch of " << batch;
  for (int64_t b = 0; b < batch; ++b)
    TESSEL_USER_CHECK(lens->get_i64(b) == length, c.span())
        << "sequence_lens[" << b << "] is " << lens->get_i64(b) << ", shorter than the scan axis (" << length
        << "): padded outputs are not supported";
}

// v[b]: entry b along axis 0, that axis dropped.
Value* entry(AdaptContext& c, Value* v, int64_t b) {
  return c.emit("Gather", {v, c.scalar(DType::kI64, double(b))}, one_attr("axis", int64_t(0)))[0];
}

// The values stacked along a new axis 0.
Value* stacked(AdaptContext& c, const std::vector<Value*>& values) {
  std::vector<Value*> rows;
  for (Value* v : values) rows.push_back(c.emit("Unsqueeze", {v, c.i64_vector({0})})[0]);
  return rows.size() == 1 ? rows[0] : c.emit("Concat", rows, one_attr("axis", int64_t(0)))[0];
}

}  // namespace

void adapt_scan8(AdaptContext& c) {
  const int64_t scans = c.int_attr("num_scan_inputs", 0);
  TESSEL_USER_CHECK(scans >= 1 && size_t(scans) + 1 <= c.inputs.size(), c.span())
      << "needs at least one scan input to know its length, got num_scan_inputs " << scans;
  const size_t states = c.inputs.size() - 1 - size_t(scans);
  std::vector<int64_t> directions = c.ints_attr("directions", std::vector<int64_t>(size_t(scans), 0));
  TESSEL_USER_CHECK(directions.size() == size_t(scans), c.span())
      << "'directions' has " << directions.size() << " entries for " << scans << " scan inputs";
  int64_t batch = -1, length = -1;
  for (size_t i = 1; i < c.inputs.size(); ++i) {
    bool scanned = i > states;
    Value* v = c.required_input(i, scanned ? "scan input" : "initial state");
    TESSEL_USER_CHECK(v->type.rank_known && v->type.rank() >= (scanned ? 2 : 1), c.span())
        << "input " << i << " needs a batch axis" << (scanned ? " and a scan axis" : "");
    int64_t b = c.static_dim(v, 0, "the batch axis");
    TESSEL_USER_CHECK(batch < 0 || b == batch, c.span()) << "inputs of batches " << batch << " and " << b;
    batch = b;
    if (!scanned) continue;
    int64_t n = c.static_dim(v, 1, "a scan axis");
    TESSEL_USER_CHECK(length < 0 || n == length, c.span())
        << "scan inputs of " << length << " and " << n << " slices along their scan axes";
    length = n;
  }
  TESSEL_USER_CHECK(batch >= 1 && length >= 1, c.span())
      << "a batch of " << batch << " and " << length << " slices: its outputs would be empty";
  TESSEL_USER_CHECK(batch <= kMaxBatch, c.span())
      << "a batch of " << batch << " entries, each a scan of its own; at most " << kMaxBatch
      << " are supported";
  require_whole_sequences(c, batch, length);

  graph::Attrs attrs;
  attrs.set("length", length);
  attrs.set("num_states", int64_t(states));
  attrs.set("num_scan_inputs", scans);
  attrs.set("reverse_inputs", directions);
  std::vector<std::vector<Value*>> per_output;  // [output][batch entry]
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Value*> inputs;
    std::vector<graph::TensorType> types;
    for (size_t i = 1; i < c.inputs.size(); ++i) {
      inputs.push_back(entry(c, c.inputs[i], b));
      graph::TensorType slice = inputs.back()->type;
      if (i > states) slice.dims.erase(slice.dims.begin());  // one step of the scan axis
      types.push_back(slice);
    }
    std::vector<Value*> captured;
    std::shared_ptr<graph::Graph> body = c.import_subgraph("body", types, captured);
    TESSEL_USER_CHECK(body->outputs().size() >= states && body->outputs().size() == c.output_names.size(),
                      c.span())
        << "its body returns " << body->outputs().size() << " values for " << states << " states and "
        << c.output_names.size() << " outputs";
    inputs.insert(inputs.end(), captured.begin(), captured.end());
    graph::Attrs entry_attrs = attrs;
    entry_attrs.set("reverse_outputs", std::vector<int64_t>(body->outputs().size() - states, 0));
    std::vector<Value*> results = add_scan(c, body, inputs, std::move(entry_attrs));
    per_output.resize(results.size());
    for (size_t k = 0; k < results.size(); ++k) per_output[k].push_back(results[k]);
  }
  std::vector<Value*> results;
  for (const std::vector<Value*>& entries : per_output) results.push_back(stacked(c, entries));
  c.results = results;
}

}  // namespace tessel::onnx_frontend
