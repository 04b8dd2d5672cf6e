// fold_qdq: Conv and MatMul between DequantizeLinear and QuantizeLinear as
// QLinearConv and QLinearMatMul (see qdq_fold.h).
#include "src/frontend/onnx/qdq_fold.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "src/frontend/onnx/importer_internal.h"
#include "src/frontend/onnx/tensor_proto.h"

namespace tessel::onnx_frontend {

namespace {

bool is_8bit(int onnx_type) {
  return onnx_type == onnx::TensorProto::INT8 || onnx_type == onnx::TensorProto::UINT8;
}

int64_t int_attr(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

bool has_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return true;
  return false;
}

// Every value name read inside a node's subgraphs (captured from outside).
void collect_subgraph_reads(const onnx::GraphProto& g, std::set<std::string>& reads) {
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) reads.insert(in);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_subgraph_reads(a.g(), reads);
      for (const auto& sub : a.graphs()) collect_subgraph_reads(sub, reads);
    }
  }
}

// A DequantizeLinear's operands where its scale and zero point are
// initializers of the model.
struct Dequantize {
  std::string quantized, scale, zero;  // zero is "" when absent
  const onnx::TensorProto* quantized_init = nullptr;
  Tensor scale_value, zero_value;
  int zero_type = -1;
  int64_t axis = 1;
};

class QdqFolder {
 public:
  QdqFolder(onnx::GraphProto& g, int opset, const std::string& model_dir)
      : g_(g), opset_(opset), model_dir_(model_dir) {
    std::set<std::string> graph_inputs;
    for (const auto& in : g.input()) graph_inputs.insert(in.name());
    // An initializer that is also a graph input can be overridden at run time.
    for (const auto& t : g.initializer())
      if (!graph_inputs.count(t.name())) init_[t.name()] = &t;
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      if (is_default_domain(n.domain()) && n.op_type() == "Constant" && n.output_size() == 1)
        for (const auto& a : n.attribute())
          if (a.name() == "value" && a.has_t()) constant_nodes_[n.output(0)] = &a.t();
      for (const auto& out : n.output()) producer_[out] = i;
      for (const auto& in : n.input()) {
        ++readers_[in];
        reader_[in] = i;
      }
      for (const auto& a : n.attribute()) {
        if (a.has_g()) collect_subgraph_reads(a.g(), captured_);
        for (const auto& sub : a.graphs()) collect_subgraph_reads(sub, captured_);
      }
    }
    for (const auto& out : g.output()) captured_.insert(out.name());
  }

  void run();

 private:
  const onnx::NodeProto* producer(const std::string& value) const {
    auto it = producer_.find(value);
    return it == producer_.end() ? nullptr : &g_.node(it->second);
  }
  // The one node reading `value`, when nothing else (no subgraph, no graph output) does.
  int only_reader(const std::string& value) const;
  std::optional<Tensor> constant(const std::string& name) const {
    auto it = init_.find(name);
    if (it == init_.end()) return std::nullopt;
    return tensor_from_proto(*it->second, model_dir_);
  }
  // A float scalar from an initializer or a Constant node (a Clip's bound).
  std::optional<float> float_scalar(const std::string& name) const;
  std::optional<Dequantize> dequantize_of(const std::string& value) const;
  bool clamps(const onnx::NodeProto& n) const;
  // The QuantizeLinear reading `value` (through a Relu or Clip, then `clamp`), if it alone does.
  std::optional<int> quantize_after(const std::string& value, int& clamp) const;
  bool scalar_8bit(const Dequantize& d) const {
    return d.scale_value.numel() == 1 && d.zero_value.numel() == 1 && is_8bit(d.zero_type);
  }
  bool per_channel_fits(const Dequantize& w, int64_t channel_axis) const;
  bool bias_fits(const std::string& bias, const Dequantize& x, const Dequantize& w) const;
  std::string quantized_bound(const onnx::NodeProto& q, float bound, const std::string& name);
  void replace(int anchor, int clamp, int quantize, onnx::NodeProto folded);

  onnx::GraphProto& g_;
  int opset_;
  std::string model_dir_;
  std::map<std::string, const onnx::TensorProto*> init_;
  std::map<std::string, const onnx::TensorProto*> constant_nodes_;  // Constant nodes' outputs
  std::map<std::string, int> producer_;
  std::map<std::string, int> readers_;  // how many node inputs read each value
  std::map<std::string, int> reader_;   // a node reading it
  std::set<std::string> captured_;
  std::map<int, std::vector<onnx::NodeProto>> replacements_;  // anchor -> nodes in its place
  std::set<int> removed_;
};

int QdqFolder::only_reader(const std::string& value) const {
  auto it = readers_.find(value);
  if (it == readers_.end() || it->second != 1 || captured_.count(value)) return -1;
  return reader_.at(value);
}

std::optional<Dequantize> QdqFolder::dequantize_of(const std::string& value) const {
  const onnx::NodeProto* n = producer(value);
  if (!n || !is_default_domain(n->domain()) || n->op_type() != "DequantizeLinear") return std::nullopt;
  if (n->input_size() < 2 || int_attr(*n, "block_size", 0) != 0 || has_attr(*n, "output_dtype"))
    return std::nullopt;
  Dequantize d;
  d.quantized = n->input(0);
  d.scale = n->input(1);
  d.zero = n->input_size() > 2 ? n->input(2) : "";
  d.axis = int_attr(*n, "axis", 1);
  auto scale_init = init_.find(d.scale);
  if (scale_init == init_.end() || scale_init->second->data_type() != onnx::TensorProto::FLOAT)
    return std::nullopt;
  d.scale_value = *constant(d.scale);
  if (!d.zero.empty()) {
    auto zero_init = init_.find(d.zero);
    if (zero_init == init_.end()) return std::nullopt;
    d.zero_type = zero_init->second->data_type();
    d.zero_value = *constant(d.zero);
  }
  if (auto q = init_.find(d.quantized); q != init_.end()) d.quantized_init = q->second;
  return d;
}

std::optional<float> QdqFolder::float_scalar(const std::string& name) const {
  const onnx::TensorProto* t = nullptr;
  if (auto it = init_.find(name); it != init_.end()) t = it->second;
  if (auto it = constant_nodes_.find(name); it != constant_nodes_.end()) t = it->second;
  if (!t || t->data_type() != onnx::TensorProto::FLOAT) return std::nullopt;
  Tensor v = tensor_from_proto(*t, model_dir_);
  if (v.numel() != 1) return std::nullopt;
  return v.data<float>()[0];
}

// A Relu, or a Clip whose bounds are float scalars stored in the model.
bool QdqFolder::clamps(const onnx::NodeProto& n) const {
  if (!is_default_domain(n.domain())) return false;
  if (n.op_type() == "Relu") return true;
  if (n.op_type() != "Clip") return false;
  for (int i = 1; i < n.input_size(); ++i)
    if (!n.input(i).empty() && !float_scalar(n.input(i))) return false;
  return true;
}

std::optional<int> QdqFolder::quantize_after(const std::string& value, int& clamp) const {
  clamp = -1;
  int reader = only_reader(value);
  if (reader < 0) return std::nullopt;
  const onnx::NodeProto* n = &g_.node(reader);
  // Clamped after the fold on the 8-bit values: Clip takes them from opset 12.
  if (opset_ >= 12 && clamps(*n)) {
    clamp = reader;
    reader = only_reader(n->output(0));
    if (reader < 0) return std::nullopt;
    n = &g_.node(reader);
  }
  if (!is_default_domain(n->domain()) || n->op_type() != "QuantizeLinear" || n->input_size() < 3)
    return std::nullopt;
  if (int_attr(*n, "block_size", 0) != 0 || has_attr(*n, "output_dtype")) return std::nullopt;
  auto scale = init_.find(n->input(1));
  auto zero = init_.find(n->input(2));
  if (scale == init_.end() || zero == init_.end()) return std::nullopt;
  if (scale->second->data_type() != onnx::TensorProto::FLOAT || !is_8bit(zero->second->data_type()))
    return std::nullopt;
  if (constant(n->input(1))->numel() != 1 || constant(n->input(2))->numel() != 1) return std::nullopt;
  return reader;
}

// Per-tensor, or per-channel along `channel_axis` of a weight stored in the model.
bool QdqFolder::per_channel_fits(const Dequantize& w, int64_t channel_axis) const {
  if (!is_8bit(w.zero_type) || w.zero_value.numel() != w.scale_value.numel()) return false;
  if (w.scale_value.numel() == 1) return true;
  if (!w.quantized_init || w.scale_value.rank() != 1) return false;
  int64_t rank = w.quantized_init->dims_size();
  int64_t axis = w.axis < 0 ? w.axis + rank : w.axis;
  return axis == channel_axis && w.quantized_init->dims(int(axis)) == w.scale_value.numel();
}

// An int32 bias stored in the model, zero point 0, scale x_scale * w_scale.
bool QdqFolder::bias_fits(const std::string& bias, const Dequantize& x, const Dequantize& w) const {
  std::optional<Dequantize> b = dequantize_of(bias);
  if (!b || !b->quantized_init || b->quantized_init->data_type() != onnx::TensorProto::INT32) return false;
  if (!b->zero.empty())
    for (int64_t i = 0; i < b->zero_value.numel(); ++i)
      if (b->zero_value.get_i64(i) != 0) return false;
  int64_t channels = w.scale_value.numel();
  if (b->scale_value.numel() != 1 && b->scale_value.numel() != channels) return false;
  float sx = x.scale_value.data<float>()[0];
  for (int64_t c = 0; c < std::max(channels, b->scale_value.numel()); ++c) {
    float expected = sx * w.scale_value.data<float>()[channels == 1 ? 0 : c];
    float actual = b->scale_value.data<float>()[b->scale_value.numel() == 1 ? 0 : c];
    if (std::fabs(actual - expected) > 1e-6f * std::fabs(expected)) return false;
  }
  return true;
}

// Quantizing is monotonic, so Q(clamp(y, lo, hi)) = clamp(Q(y), Q(lo), Q(hi)):
// a Relu or Clip before the QuantizeLinear becomes a Clip of the 8-bit
// values, its bounds quantized here as QuantizeLinear would (in float,
// halves to even, saturated).
std::string QdqFolder::quantized_bound(const onnx::NodeProto& q, float bound, const std::string& name) {
  float scale = constant(q.input(1))->data<float>()[0];
  Tensor zero = *constant(q.input(2));
  auto [lo, hi] =
      zero.dtype() == DType::kI8 ? std::pair<double, double>(-128, 127) : std::pair<double, double>(0, 255);
  double v = std::clamp(double(std::nearbyint(bound / scale)) + double(zero.get_i64(0)), lo, hi);
  Tensor t(zero.dtype(), {});
  t.set_f64(0, v);
  tensor_to_proto(t, name, g_.add_initializer());
  return name;
}

void QdqFolder::replace(int anchor, int clamp, int quantize, onnx::NodeProto folded) {
  const onnx::NodeProto& q = g_.node(quantize);
  std::vector<onnx::NodeProto> nodes;
  if (clamp < 0) {
    folded.add_output(q.output(0));
    nodes.push_back(folded);
  } else {
    const onnx::NodeProto& act = g_.node(clamp);
    std::string unclamped = q.output(0) + "/before_" + act.op_type();
    folded.add_output(unclamped);
    onnx::NodeProto clip;
    clip.set_op_type("Clip");
    clip.set_name(act.name());
    clip.add_input(unclamped);
    for (int i = 1; i <= 2; ++i) {
      bool relu_min = act.op_type() == "Relu" && i == 1;
      bool given = act.op_type() == "Clip" && i < act.input_size() && !act.input(i).empty();
      float bound = given ? *float_scalar(act.input(i)) : 0.0f;
      clip.add_input(relu_min || given ? quantized_bound(q, bound, q.output(0) + (i == 1 ? "/min" : "/max"))
                                       : "");
    }
    clip.add_output(q.output(0));
    nodes.push_back(folded);
    nodes.push_back(clip);
    removed_.insert(clamp);
  }
  replacements_[anchor] = nodes;
  removed_.insert(quantize);
}

void QdqFolder::run() {
  for (int i = 0; i < g_.node_size(); ++i) {
    const onnx::NodeProto& n = g_.node(i);
    bool conv = n.op_type() == "Conv", matmul = n.op_type() == "MatMul";
    if (!is_default_domain(n.domain()) || !(conv || matmul) || n.input_size() < 2 || removed_.count(i))
      continue;
    std::optional<Dequantize> x = dequantize_of(n.input(0));
    std::optional<Dequantize> w = dequantize_of(n.input(1));
    if (!x || !w || !scalar_8bit(*x) || !per_channel_fits(*w, conv ? 0 : 1)) continue;
    if (matmul && w->scale_value.numel() > 1 && w->quantized_init->dims_size() != 2) continue;
    bool has_bias = conv && n.input_size() > 2 && !n.input(2).empty();
    if (has_bias && !bias_fits(n.input(2), *x, *w)) continue;
    int clamp = -1;
    std::optional<int> quantize = quantize_after(n.output(0), clamp);
    if (!quantize) continue;
    const onnx::NodeProto& q = g_.node(*quantize);
    onnx::NodeProto folded;
    folded.set_op_type(conv ? "QLinearConv" : "QLinearMatMul");
    folded.set_name(n.name());
    for (const std::string& in :
         {x->quantized, x->scale, x->zero, w->quantized, w->scale, w->zero, q.input(1), q.input(2)})
      folded.add_input(in);
    if (has_bias) folded.add_input(dequantize_of(n.input(2))->quantized);
    if (conv) *folded.mutable_attribute() = n.attribute();
    replace(i, clamp, *quantize, folded);
  }
  if (replacements_.empty()) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  std::set<std::string> read(captured_);
  for (int i = 0; i < g_.node_size(); ++i) {
    if (auto it = replacements_.find(i); it != replacements_.end()) {
      for (const auto& r : it->second) *nodes.Add() = r;
    } else if (!removed_.count(i)) {
      *nodes.Add() = g_.node(i);
    }
  }
  // The DequantizeLinear nodes the folded products bypassed, where nothing else reads them.
  for (const auto& n : nodes) read.insert(n.input().begin(), n.input().end());
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (const auto& n : nodes)
    if (n.op_type() != "DequantizeLinear" || !is_default_domain(n.domain()) || read.count(n.output(0)))
      *kept.Add() = n;
  g_.mutable_node()->Swap(&kept);
}

}  // namespace

void fold_qdq(onnx::GraphProto& graph, int opset, const std::string& model_dir) {
  if (opset < 10) return;  // QLinearConv and QLinearMatMul are opset 10
  QdqFolder(graph, opset, model_dir).run();
}

bool has_quantize_linear(const onnx::GraphProto& graph) {
  for (const auto& n : graph.node())
    if (is_default_domain(n.domain()) && n.op_type() == "QuantizeLinear") return true;
  return false;
}

}  // namespace tessel::onnx_frontend
