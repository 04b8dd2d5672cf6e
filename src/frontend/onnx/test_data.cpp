#include "src/frontend/onnx/test_data.h"

#include <onnx/onnx-data_pb.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>

#include "src/frontend/onnx/tensor_proto.h"

namespace tessel::onnx_frontend {

namespace fs = std::filesystem;

namespace {

// Files named <prefix>_<N>.pb in dir, ordered by N.
std::vector<fs::path> numbered_pbs(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, fs::path>> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string f = e.path().filename().string();
    if (f.rfind(prefix + "_", 0) != 0 || e.path().extension() != ".pb") continue;
    std::string num = f.substr(prefix.size() + 1, f.size() - prefix.size() - 4);
    int n = 0;
    auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
    if (num.empty() || ec != std::errc() || end != num.data() + num.size()) continue;
    found.emplace_back(n, e.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& [n, p] : found) out.push_back(p);
  return out;
}

// A SequenceProto or OptionalProto file (a TensorProto one: load_tensor_pb).
template <typename Proto>
Proto parse_file(const fs::path& path, const char* what) {
  std::error_code ec;  // a FIFO would block forever, a folder reads as nothing
  TESSEL_USER_CHECK(fs::is_regular_file(path, ec), Span{})
      << path.string() << ": no such file or not a regular file";
  std::ifstream in(path, std::ios::binary);
  Proto proto;
  TESSEL_USER_CHECK(in.good() && proto.ParseFromIstream(&in), Span{})
      << path.string() << ": not a serialised ONNX " << what;
  return proto;
}

Tensor decoded(const onnx::TensorProto& proto, const fs::path& path) {
  try {
    return tensor_from_proto(proto, path.parent_path().string());
  } catch (const UserError& e) {
    throw UserError(path.string() + ": " + e.what());
  }
}

std::vector<Tensor> sequence_tensors(const onnx::SequenceProto& seq, const fs::path& path) {
  TESSEL_USER_CHECK(seq.elem_type() == onnx::SequenceProto::TENSOR || seq.tensor_values_size() == 0, Span{})
      << path.string() << ": only sequences of tensors are supported";
  std::vector<Tensor> out;
  for (const onnx::TensorProto& t : seq.tensor_values()) out.push_back(decoded(t, path));
  return out;
}

// One file as `type` says: appends its tensors to `tensors`, their names
// (for outputs) to `names`, and its structure to `set`.
void read_value(const fs::path& path, const std::string& name, const onnx::TypeProto& type, TestDataSet& set,
                std::vector<Tensor>& tensors, std::vector<std::string>* names) {
  auto add_sequence = [&](const std::vector<Tensor>& elements) {
    set.sequence_lengths[name] = int64_t(elements.size());
    for (size_t k = 0; k < elements.size(); ++k) {
      tensors.push_back(elements[k]);
      if (names) names->push_back(name + "[" + std::to_string(k) + "]");
    }
  };
  if (type.has_sequence_type()) {
    add_sequence(sequence_tensors(parse_file<onnx::SequenceProto>(path, "SequenceProto"), path));
  } else if (type.has_optional_type()) {
    auto opt = parse_file<onnx::OptionalProto>(path, "OptionalProto");
    if (opt.has_tensor_value()) {
      tensors.push_back(decoded(opt.tensor_value(), path));
      if (names) names->push_back(name);
    } else if (opt.has_sequence_value()) {
      add_sequence(sequence_tensors(opt.sequence_value(), path));
    } else {
      set.empty_optionals.insert(name);
    }
  } else {
    tensors.push_back(load_tensor_pb(path.string()));
    if (names) names->push_back(name);
  }
}

}  // namespace

TestDataSet load_test_data_set(const std::string& model_path, const std::string& set_dir) {
  std::ifstream in(model_path, std::ios::binary);
  onnx::ModelProto model;
  TESSEL_USER_CHECK(in.good() && model.ParseFromIstream(&in), Span{}) << model_path << ": not an ONNX model";
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& vi : model.graph().input()) {
    bool initializer = std::any_of(model.graph().initializer().begin(), model.graph().initializer().end(),
                                   [&](const onnx::TensorProto& t) { return t.name() == vi.name(); });
    if (!initializer) inputs.push_back(&vi);
  }
  TestDataSet set;
  std::vector<fs::path> input_files = numbered_pbs(set_dir, "input");
  std::vector<fs::path> output_files = numbered_pbs(set_dir, "output");
  TESSEL_USER_CHECK(input_files.size() <= inputs.size(), Span{})
      << set_dir << ": " << input_files.size() << " input files for " << inputs.size() << " graph inputs";
  TESSEL_USER_CHECK(output_files.size() == size_t(model.graph().output_size()), Span{})
      << set_dir << ": " << output_files.size() << " output files for " << model.graph().output_size()
      << " graph outputs";
  for (size_t i = 0; i < input_files.size(); ++i)
    read_value(input_files[i], inputs[i]->name(), inputs[i]->type(), set, set.inputs, nullptr);
  // An optional input the set gives no file for holds nothing.
  for (size_t i = input_files.size(); i < inputs.size(); ++i)
    if (inputs[i]->type().has_optional_type()) set.empty_optionals.insert(inputs[i]->name());
  for (size_t i = 0; i < output_files.size(); ++i) {
    const onnx::ValueInfoProto& vi = model.graph().output(int(i));
    TestDataSet outputs_structure;  // an output's structure is the compiled graph's to decide
    read_value(output_files[i], vi.name(), vi.type(), outputs_structure, set.expected, &set.expected_names);
  }
  return set;
}

}  // namespace tessel::onnx_frontend
