// Inputs and outputs of `tessel run`.
#include "src/driver/run_inputs.h"

#include <filesystem>
#include <functional>
#include <random>
#include <set>

#include "src/driver/npy.h"
#include "src/frontend/onnx/tensor_proto.h"
#include "src/reference/executor.h"

namespace tessel::driver {

namespace fs = std::filesystem;

std::string safe_file_name(const std::string& value_name) {
  std::string out;
  for (char c : value_name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

namespace {

// "input_<i>.pb" or "<safe name>.npy" for each name; `check` validates each.
std::vector<Tensor> load_named_inputs(const std::vector<std::string>& names, const std::string& dir,
                                      const std::function<void(size_t, const Tensor&)>& check) {
  TESSEL_USER_CHECK(fs::is_directory(dir), Span{}) << dir << ": not a folder";
  std::vector<Tensor> inputs;
  bool pb_layout = fs::exists(fs::path(dir) / "input_0.pb");
  for (size_t i = 0; i < names.size(); ++i) {
    fs::path path = pb_layout ? fs::path(dir) / ("input_" + std::to_string(i) + ".pb")
                              : fs::path(dir) / (safe_file_name(names[i]) + ".npy");
    TESSEL_USER_CHECK(fs::exists(path), Span{}) << "missing input '" << names[i] << "': no file " << path.string();
    Tensor t = pb_layout ? onnx_frontend::load_tensor_pb(path.string()) : read_npy(path.string());
    try {
      check(i, t);
    } catch (const UserError& e) {  // which file does not fit
      TESSEL_USER_ERROR(Span{}) << path.string() << ": " << e.what();
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

}  // namespace

std::vector<Tensor> load_inputs(const graph::Graph& g, const std::string& dir) {
  std::vector<std::string> names;
  for (const graph::Value* in : g.inputs()) names.push_back(in->name);
  return load_named_inputs(names, dir, [&](size_t i, const Tensor& t) { reference::check_input(*g.inputs()[i], t); });
}

std::vector<Tensor> load_inputs(const std::vector<rt::TensorSpec>& specs, const std::string& dir) {
  std::vector<std::string> names;
  for (const rt::TensorSpec& s : specs) names.push_back(s.name);
  return load_named_inputs(names, dir, [&](size_t i, const Tensor& t) {
    const rt::TensorSpec& s = specs[i];
    TESSEL_USER_CHECK(t.dtype() == DType(s.dtype) && t.shape() == s.shape, Span{})
        << "input '" << s.name << "': the model takes " << Tensor(DType(s.dtype), s.shape).type_str() << ", the file holds "
        << t.type_str();
  });
}

std::vector<Tensor> random_inputs(const graph::Graph& g, uint64_t seed) {
  std::vector<rt::TensorSpec> specs;
  for (const graph::Value* in : g.inputs()) {
    TESSEL_USER_CHECK(in->type.is_static(), Span{})
        << "input '" << in->name << "' has shape " << in->type.str()
        << "; bind its dimensions with --input-shape " << in->name << "=...";
    specs.push_back({in->name, uint8_t(in->type.dtype), in->type.static_dims()});
  }
  return random_inputs(specs, seed);
}

std::vector<Tensor> random_inputs(const std::vector<rt::TensorSpec>& specs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Tensor> inputs;
  for (const rt::TensorSpec& s : specs) {
    Tensor t(DType(s.dtype), s.shape);
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    std::uniform_int_distribution<int64_t> small(0, 3);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (is_float(t.dtype())) t.set_f64(i, real(rng));
      else if (t.dtype() == DType::kBool) t.set_i64(i, small(rng) & 1);
      else t.set_i64(i, small(rng));
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

void write_outputs(const graph::Graph& g, const std::vector<Tensor>& outputs, const std::string& dir,
                   std::ostream& log) {
  std::vector<std::string> names;
  for (size_t j = 0; j < g.num_user_outputs(); ++j) names.push_back(g.outputs()[j]->name);
  write_outputs(names, outputs, dir, log);
}

void write_outputs(const std::vector<std::string>& names, const std::vector<Tensor>& outputs, const std::string& dir,
                   std::ostream& log) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  TESSEL_USER_CHECK(fs::is_directory(dir), Span{}) << dir << ": cannot create folder";
  std::set<std::string> used;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = names[i];
    std::string file = safe_file_name(name);
    // Two names that become the same file name get the output's index appended.
    if (!used.insert(file).second) used.insert(file += "_" + std::to_string(i));
    fs::path path = fs::path(dir) / (file + ".npy");
    write_npy(path.string(), outputs[i]);
    log << "output '" << name << "' " << outputs[i].type_str() << " -> " << path.string() << "\n";
  }
}

}  // namespace tessel::driver
