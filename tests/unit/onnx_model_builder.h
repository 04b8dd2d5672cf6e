// An ONNX model built in memory for importer and op tests: typed inputs with
// static or symbolic dimensions, nodes with attributes, initializers.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <variant>
#include <vector>

#include "src/frontend/onnx/importer.h"

namespace tessel::onnx_test {

// An f32 tensor of the shape holding values in order.
inline Tensor f32(const std::vector<double>& values, Dims shape) {
  Tensor t(DType::kF32, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.set_f64(int64_t(i), values[i]);
  return t;
}

struct ModelBuilder {
  onnx::ModelProto model;
  onnx::GraphProto* g;

  explicit ModelBuilder(int opset = 17) {
    model.set_ir_version(8);
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    g = model.mutable_graph();
    g->set_name("t");
  }
  // g points into model: a copy points into its own (builders are returned by value).
  ModelBuilder(const ModelBuilder& o) : model(o.model), g(model.mutable_graph()) {}
  ModelBuilder& operator=(const ModelBuilder& o) {
    model = o.model;
    g = model.mutable_graph();
    return *this;
  }
  void input(const std::string& name, std::vector<std::variant<int64_t, std::string>> dims,
             int type = onnx::TensorProto::FLOAT) {
    value_info(g->add_input(), name, dims, type);
  }
  void output(const std::string& name) { g->add_output()->set_name(name); }
  static void value_info(onnx::ValueInfoProto* vi, const std::string& name,
                         const std::vector<std::variant<int64_t, std::string>>& dims, int type) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (const auto& d : dims) {
      if (auto* v = std::get_if<int64_t>(&d))
        shape->add_dim()->set_dim_value(*v);
      else
        shape->add_dim()->set_dim_param(std::get<std::string>(d));
    }
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs,
                        const std::string& name = "") {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + std::to_string(g->node_size()) : name);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  }
  // A node of a subgraph (a loop's body) with one output, named "body_<out>".
  static onnx::NodeProto* subgraph_node(onnx::GraphProto* body, const std::string& op,
                                        const std::vector<std::string>& ins, const std::string& out) {
    auto* n = body->add_node();
    n->set_op_type(op);
    n->set_name("body_" + out);
    for (const auto& i : ins) n->add_input(i);
    n->add_output(out);
    return n;
  }
  graph::Graph import(const onnx_frontend::ImportOptions& o = {}, const std::string& dir = ".") {
    return onnx_frontend::import_model_proto(model, dir, o);
  }
  // An int64 initializer (a constant input).
  void int64_initializer(const std::string& name, const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
  }
  void float_initializer(const std::string& name, const std::vector<int64_t>& dims,
                         const std::vector<float>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
  }
  // A float, or an integer type stored as ONNX stores them (int32_data for 8- to 32-bit types).
  void typed_initializer(const std::string& name, int type, const std::vector<int64_t>& dims,
                         const std::vector<double>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    for (double v : values) {
      if (type == onnx::TensorProto::FLOAT)
        t->add_float_data(float(v));
      else
        t->add_int32_data(int32_t(v));
    }
  }
  static void set_float(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void set_string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  static void set_strings(onnx::NodeProto* n, const std::string& name, const std::vector<std::string>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const std::string& s : v) a->add_strings(s);
  }
  static void set_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void set_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t i : v) a->add_ints(i);
  }
};

// The import of `b` fails with a user error whose message contains `want`.
inline void expect_import_error(ModelBuilder& b, const std::string& want) {
  try {
    b.import();
    ADD_FAILURE() << "imported";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

}  // namespace tessel::onnx_test
