// Every supported op, at every opset the importer accepts, given too few,
// omitted or too many inputs, and an output count it may not expect: the
// import either succeeds or throws a UserError. Anything else (another
// exception, an out-of-range read caught by the sanitizers) is a defect: the
// adapters run before the graph op's own schema checks the node, and ONNX's
// library only knows the opsets up to its own version.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <exception>
#include <string>
#include <vector>

#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/importer.h"
#include "src/frontend/onnx/supported_ops.h"

namespace tessel::onnx_frontend {
namespace {

// The input lists tried: none, then 1 to 6 uses of x, each also with its last
// input omitted ("") and with every input omitted.
std::vector<std::vector<std::string>> input_lists() {
  std::vector<std::vector<std::string>> lists = {{}};
  for (size_t n = 1; n <= 6; ++n) {
    std::vector<std::string> all(n, "x");
    lists.push_back(all);
    all.back() = "";
    lists.push_back(all);
    lists.push_back(std::vector<std::string>(n, ""));
  }
  return lists;
}

std::string one_node_model(const std::string& op, int opset, const std::vector<std::string>& inputs,
                           int outputs, const std::string& domain = "") {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain(domain);
  o->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* x = g->add_input();
  x->set_name("x");
  auto* tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {2, 3, 4, 4}) tt->mutable_shape()->add_dim()->set_dim_value(d);
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("n");
  n->set_domain(domain);
  for (const std::string& i : inputs) n->add_input(i);
  for (int k = 0; k < outputs; ++k) n->add_output("y" + std::to_string(k));
  g->add_output()->set_name("y0");
  return m.SerializeAsString();
}

// "" when importing gives a graph or a UserError; otherwise what escaped.
std::string unexpected_failure(const std::string& bytes) {
  try {
    import_model_bytes(bytes, ".");
  } catch (const UserError&) {
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
  return "";
}

TEST(ImporterArity, EveryOpRefusesMalformedArityWithAUserError) {
  std::vector<int> opsets;
  for (int v = 7; v <= 27; ++v) opsets.push_back(v);
  int tried = 0;
  for (const OpSupport& op : supported_ops()) {
    for (int opset : opsets) {
      if (opset < op.first_opset) continue;
      for (const auto& inputs : input_lists()) {
        for (int outputs : {1, 3}) {
          std::string what = unexpected_failure(one_node_model(op.op, opset, inputs, outputs));
          ++tried;
          EXPECT_EQ(what, "") << op.op << " at opset " << opset << " with " << inputs.size() << " inputs, "
                              << outputs << " outputs";
        }
      }
    }
  }
  EXPECT_GT(tried, 1000);
}

TEST(ImporterArity, EveryMlOpRefusesMalformedArityWithAUserError) {
  for (const auto& [op, adapter] : ml_adapters())
    for (int opset = 1; opset <= 5; ++opset)
      for (const auto& inputs : input_lists())
        for (int outputs : {1, 3})
          EXPECT_EQ(unexpected_failure(one_node_model(op, opset, inputs, outputs, kMlDomain)), "")
              << op << " at ai.onnx.ml opset " << opset << " with " << inputs.size() << " inputs, " << outputs
              << " outputs";
}

}  // namespace
}  // namespace tessel::onnx_frontend
