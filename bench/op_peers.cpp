// Times single operators compiled by Tessel against OpenBLAS and oneDNN, in one process at
// one thread count, and checks Tessel's output against theirs. bench/cpu_bench.py builds and
// runs it once per thread count (oneDNN's OpenMP reads OMP_NUM_THREADS only at start-up):
//   op_peers --threads T --repeat N --warmup W --budget S
//            --op gemm,NAME,M,N,K,TESSEL.so
//            --op conv,NAME,C,H,W,K,STRIDE,WEIGHTS.bin,TESSEL.so   (3x3, pad 1, bias)
// TESSEL.so is "-" when there is none (its compile failed). WEIGHTS.bin holds
// the float32 weights [K,C,3,3] then the bias [K], the initializers of the
// ONNX model Tessel compiled, so both sides compute the same convolution.
// Output lines, machine-readable (key=value; a reason is the rest of its line):
//   INFO key=value ...
//   RESULT op=NAME impl=IMPL threads=T reps=N median_ms=X min_ms=Y
//   NA op=NAME impl=IMPL reason=TEXT
//   CHECK op=NAME ref=IMPL max_rel_err=E     (max|tessel - ref| / max|ref|)
// Built with -DHAVE_OPENBLAS and/or -DHAVE_DNNL when those libraries are there.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../include/tessel/runtime.h"

#ifdef HAVE_OPENBLAS
#include <cblas.h>
#endif
#ifdef HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace {

struct Options {
  int threads = 1, repeat = 10, warmup = 2;
  double budget_s = 20;  // stop repeating after this long (keeping at least 3 runs)
};

struct Op {
  std::vector<std::string> f;  // the comma-separated fields of --op
};

using Clock = std::chrono::steady_clock;

// Warm-up runs, then timed runs until `repeat` runs or the budget is spent.
void time_it(const std::string& op, const std::string& impl, const Options& o, const std::function<void()>& fn) {
  // Let the previous library's worker threads stop spinning before this one starts:
  // with 2 cores, a spinning OpenMP or BLAS pool would steal one of them.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (int i = 0; i < o.warmup; ++i) fn();
  std::vector<double> ms;
  auto start = Clock::now();
  while (int(ms.size()) < o.repeat) {
    auto t0 = Clock::now();
    fn();
    auto t1 = Clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (int(ms.size()) >= std::min(3, o.repeat) && std::chrono::duration<double>(t1 - start).count() > o.budget_s)
      break;
  }
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  double median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  std::printf("RESULT op=%s impl=%s threads=%d reps=%zu median_ms=%.6f min_ms=%.6f\n", op.c_str(), impl.c_str(),
              o.threads, n, median, ms[0]);
  std::fflush(stdout);
}

void not_available(const std::string& op, const std::string& impl, const std::string& reason) {
  std::string r = reason;
  std::replace(r.begin(), r.end(), '\n', ' ');
  std::printf("NA op=%s impl=%s reason=%s\n", op.c_str(), impl.c_str(), r.c_str());
  std::fflush(stdout);
}

void check(const std::string& op, const std::string& ref_name, const std::vector<float>& got,
           const std::vector<float>& ref) {
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double d = std::fabs(double(got[i]) - double(ref[i]));
    if (std::isnan(d)) max_diff = INFINITY;  // a NaN or Inf output fails loudly
    max_diff = std::max(max_diff, d);
    max_ref = std::max(max_ref, std::fabs(double(ref[i])));
  }
  std::printf("CHECK op=%s ref=%s max_rel_err=%.3e\n", op.c_str(), ref_name.c_str(),
              max_ref > 0 ? max_diff / max_ref : max_diff);
  std::fflush(stdout);
}

std::vector<float> random_vector(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// A model library of `tessel compile`, used through its C ABI by dlsym.
class TesselModel {
 public:
  explicit TesselModel(const std::string& path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
    sym(last_error_, "tessel_last_error");
    sym(load_, "tessel_model_load");
    sym(unload_, "tessel_model_unload");
    sym(input_info_, "tessel_model_input_info");
    sym(output_info_, "tessel_model_output_info");
    sym(num_inputs_, "tessel_model_num_inputs");
    sym(create_, "tessel_context_create");
    sym(destroy_, "tessel_context_destroy");
    sym(run_, "tessel_context_run");
    sym(set_threads_, "tessel_set_num_threads");
    model_ = load_();
    if (!model_) throw std::runtime_error(std::string("tessel_model_load: ") + last_error_());
    ctx_ = create_(model_);
    if (!ctx_) throw std::runtime_error(std::string("tessel_context_create: ") + last_error_());
  }
  // The library stays loaded: its thread pool may outlive a dlclose badly.
  ~TesselModel() {
    if (ctx_) destroy_(ctx_);
    if (model_) unload_(model_);
  }
  void set_threads(int n) {
    if (set_threads_(n) != 0) throw std::runtime_error(std::string("tessel_set_num_threads: ") + last_error_());
  }
  // Checks that the model's float32 inputs and output have these shapes.
  void expect(const std::vector<std::vector<int64_t>>& inputs, const std::vector<int64_t>& output) {
    if (num_inputs_(model_) != int32_t(inputs.size()))
      throw std::runtime_error("the model has " + std::to_string(num_inputs_(model_)) + " inputs, expected " +
                               std::to_string(inputs.size()));
    for (size_t i = 0; i <= inputs.size(); ++i) {
      tessel_tensor_info info{};
      int status = i < inputs.size() ? input_info_(model_, int32_t(i), &info) : output_info_(model_, 0, &info);
      const std::vector<int64_t>& want = i < inputs.size() ? inputs[i] : output;
      if (status != 0) throw std::runtime_error(last_error_());
      std::vector<int64_t> have(info.shape, info.shape + info.rank);
      if (info.dtype != TESSEL_F32 || have != want)
        throw std::runtime_error(std::string("tensor ") + info.name + " has an unexpected dtype or shape");
    }
  }
  void run(const std::vector<const float*>& inputs, const std::vector<std::vector<int64_t>>& in_shapes, float* output,
           const std::vector<int64_t>& out_shape) {
    std::vector<tessel_tensor> in;
    for (size_t i = 0; i < inputs.size(); ++i)
      in.push_back({const_cast<float*>(inputs[i]), TESSEL_F32, int32_t(in_shapes[i].size()), in_shapes[i].data()});
    tessel_tensor out{output, TESSEL_F32, int32_t(out_shape.size()), out_shape.data()};
    if (run_(ctx_, in.data(), int32_t(in.size()), &out, 1) != 0)
      throw std::runtime_error(std::string("tessel_context_run: ") + last_error_());
  }

 private:
  template <class F>
  void sym(F& fn, const char* name) {
    fn = reinterpret_cast<F>(dlsym(handle_, name));
    if (!fn) throw std::runtime_error(std::string("missing symbol ") + name);
  }
  void* handle_ = nullptr;
  tessel_model* model_ = nullptr;
  tessel_context* ctx_ = nullptr;
  const char* (*last_error_)() = nullptr;
  tessel_model* (*load_)() = nullptr;
  void (*unload_)(tessel_model*) = nullptr;
  int (*input_info_)(const tessel_model*, int32_t, tessel_tensor_info*) = nullptr;
  int (*output_info_)(const tessel_model*, int32_t, tessel_tensor_info*) = nullptr;
  int32_t (*num_inputs_)(const tessel_model*) = nullptr;
  tessel_context* (*create_)(const tessel_model*) = nullptr;
  void (*destroy_)(tessel_context*) = nullptr;
  int (*run_)(tessel_context*, const tessel_tensor*, int32_t, tessel_tensor*, int32_t) = nullptr;
  int (*set_threads_)(int32_t) = nullptr;
};

// Times Tessel's library on the inputs; true when it ran (output written).
bool time_tessel(const std::string& name, const std::string& so, const Options& o,
                 const std::vector<const float*>& inputs, const std::vector<std::vector<int64_t>>& in_shapes,
                 std::vector<float>& output, const std::vector<int64_t>& out_shape) {
  if (so == "-") {
    not_available(name, "tessel", "tessel compile failed (see above)");
    return false;
  }
  try {
    TesselModel m(so);
    m.set_threads(o.threads);
    m.expect(in_shapes, out_shape);
    time_it(name, "tessel", o, [&] { m.run(inputs, in_shapes, output.data(), out_shape); });
    return true;
  } catch (const std::exception& e) {
    not_available(name, "tessel", so + ": " + e.what());
    return false;
  }
}

void bench_gemm(const Op& op, const Options& o) {
  const std::string& name = op.f.at(1);
  int64_t M = std::stoll(op.f.at(2)), N = std::stoll(op.f.at(3)), K = std::stoll(op.f.at(4));
  std::vector<float> a = random_vector(M * K, 1), b = random_vector(K * N, 2);
  std::vector<float> tessel_c(M * N), ref_c;
  std::string ref_name;
  bool tessel_ok =
      time_tessel(name, op.f.at(5), o, {a.data(), b.data()}, {{M, K}, {K, N}}, tessel_c, {M, N});
#ifdef HAVE_OPENBLAS
  std::vector<float> ob_c(M * N);
  time_it(name, "openblas", o, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.f, a.data(), K, b.data(), N, 0.f,
                ob_c.data(), N);
  });
  ref_c = ob_c, ref_name = "openblas";
#else
  not_available(name, "openblas", "built without OpenBLAS (cblas.h or -lopenblas missing)");
#endif
#ifdef HAVE_DNNL
  std::vector<float> dn_c(M * N);
  time_it(name, "onednn_sgemm", o, [&] {
    if (dnnl_sgemm('N', 'N', M, N, K, 1.f, a.data(), K, b.data(), N, 0.f, dn_c.data(), N) != dnnl_success)
      throw std::runtime_error("dnnl_sgemm failed");
  });
  if (ref_c.empty()) ref_c = dn_c, ref_name = "onednn_sgemm";
#else
  not_available(name, "onednn_sgemm", "built without oneDNN (dnnl.hpp or -ldnnl missing)");
#endif
  if (tessel_ok && ref_c.empty()) {  // no peer: a naive reference, slow but only once
    ref_c.assign(M * N, 0.f), ref_name = "naive";
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < N; ++j) ref_c[i * N + j] += a[i * K + k] * b[k * N + j];
  }
  if (tessel_ok) check(name, ref_name, tessel_c, ref_c);
}

struct ConvShape {
  int64_t C, H, W, K, stride, OH, OW;
};

#ifdef HAVE_DNNL
// oneDNN's direct convolution. any_layout: oneDNN picks the activations' layout
// (blocked, e.g. nChw8c) and the input is reordered ahead of timing, as in a
// network kept in that layout; otherwise the activations stay plain NCHW. The
// weights are always reordered ahead (they are constant). Returns the output in NCHW.
std::vector<float> time_onednn_conv(const std::string& name, const Options& o, const ConvShape& s, bool any_layout,
                                    std::vector<float>& x, std::vector<float>& w, std::vector<float>& bias) {
  using namespace dnnl;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  memory::dims src_dims{1, s.C, s.H, s.W}, w_dims{s.K, s.C, 3, 3}, b_dims{s.K}, dst_dims{1, s.K, s.OH, s.OW};
  memory::dims strides{s.stride, s.stride}, pads{1, 1};
  tag act = any_layout ? tag::any : tag::nchw;
  memory::desc src_md(src_dims, dt::f32, act), w_md(w_dims, dt::f32, tag::any), b_md(b_dims, dt::f32, tag::x),
      dst_md(dst_dims, dt::f32, act);
#if DNNL_VERSION_MAJOR >= 3
  convolution_forward::primitive_desc pd(eng, prop_kind::forward_inference, algorithm::convolution_direct, src_md,
                                         w_md, b_md, dst_md, strides, pads, pads);
#else
  convolution_forward::desc desc(prop_kind::forward_inference, algorithm::convolution_direct, src_md, w_md, b_md,
                                 dst_md, strides, pads, pads);
  convolution_forward::primitive_desc pd(desc, eng);
#endif
  std::string impl = any_layout ? "onednn" : "onednn_nchw";
  std::printf("INFO op=%s impl=%s onednn_kernel=%s\n", name.c_str(), impl.c_str(), pd.impl_info_str());
  memory user_src({src_dims, dt::f32, tag::nchw}, eng, x.data());
  memory user_w({w_dims, dt::f32, tag::oihw}, eng, w.data());
  memory user_dst({dst_dims, dt::f32, tag::nchw}, eng);
  memory b_mem(pd.bias_desc(), eng, bias.data());
  auto ahead = [&](memory& user, const memory::desc& want) {
    if (user.get_desc() == want) return user;
    memory m(want, eng);
    reorder(user, m).execute(strm, user, m);
    strm.wait();
    return m;
  };
  memory src_mem = ahead(user_src, pd.src_desc()), w_mem = ahead(user_w, pd.weights_desc());
  memory dst_mem = pd.dst_desc() == user_dst.get_desc() ? user_dst : memory(pd.dst_desc(), eng);
  convolution_forward conv(pd);
  time_it(name, impl, o, [&] {
    conv.execute(strm, {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, w_mem}, {DNNL_ARG_BIAS, b_mem},
                        {DNNL_ARG_DST, dst_mem}});
    strm.wait();
  });
  if (dst_mem != user_dst) {
    reorder(dst_mem, user_dst).execute(strm, dst_mem, user_dst);
    strm.wait();
  }
  const float* out = static_cast<const float*>(user_dst.get_data_handle());
  return std::vector<float>(out, out + s.K * s.OH * s.OW);
}
#endif

std::vector<float> naive_conv(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>& bias) {
  std::vector<float> y(s.K * s.OH * s.OW);
  for (int64_t k = 0; k < s.K; ++k)
    for (int64_t oh = 0; oh < s.OH; ++oh)
      for (int64_t ow = 0; ow < s.OW; ++ow) {
        double acc = bias[k];
        for (int64_t c = 0; c < s.C; ++c)
          for (int64_t r = 0; r < 3; ++r)
            for (int64_t q = 0; q < 3; ++q) {
              int64_t ih = oh * s.stride + r - 1, iw = ow * s.stride + q - 1;
              if (ih >= 0 && ih < s.H && iw >= 0 && iw < s.W)
                acc += double(x[(c * s.H + ih) * s.W + iw]) * w[((k * s.C + c) * 3 + r) * 3 + q];
            }
        y[(k * s.OH + oh) * s.OW + ow] = float(acc);
      }
  return y;
}

void bench_conv(const Op& op, const Options& o) {
  const std::string& name = op.f.at(1);
  ConvShape s{std::stoll(op.f.at(2)), std::stoll(op.f.at(3)), std::stoll(op.f.at(4)), std::stoll(op.f.at(5)),
              std::stoll(op.f.at(6)), 0, 0};
  s.OH = (s.H + 2 - 3) / s.stride + 1, s.OW = (s.W + 2 - 3) / s.stride + 1;
  std::vector<float> w(s.K * s.C * 9), bias(s.K);
  FILE* f = std::fopen(op.f.at(7).c_str(), "rb");
  bool read_ok = f && std::fread(w.data(), 4, w.size(), f) == w.size() &&
                 std::fread(bias.data(), 4, bias.size(), f) == bias.size();
  if (f) std::fclose(f);
  if (!read_ok) throw std::runtime_error("cannot read the weights " + op.f.at(7));
  std::vector<float> x = random_vector(s.C * s.H * s.W, 3), tessel_y(s.K * s.OH * s.OW), ref_y;
  std::string ref_name;
  bool tessel_ok =
      time_tessel(name, op.f.at(8), o, {x.data()}, {{1, s.C, s.H, s.W}}, tessel_y, {1, s.K, s.OH, s.OW});
#ifdef HAVE_DNNL
  for (bool any_layout : {true, false}) {
    try {
      std::vector<float> y = time_onednn_conv(name, o, s, any_layout, x, w, bias);
      if (ref_y.empty()) ref_y = y, ref_name = any_layout ? "onednn" : "onednn_nchw";
    } catch (const std::exception& e) {
      not_available(name, any_layout ? "onednn" : "onednn_nchw", e.what());
    }
  }
#else
  not_available(name, "onednn", "built without oneDNN (dnnl.hpp or -ldnnl missing)");
#endif
  if (tessel_ok && ref_y.empty()) ref_y = naive_conv(s, x, w, bias), ref_name = "naive";
  if (tessel_ok) check(name, ref_name, tessel_y, ref_y);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::vector<Op> ops;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "op_peers: %s needs a value\n", a.c_str());
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--threads") o.threads = std::stoi(v);
    else if (a == "--repeat") o.repeat = std::max(1, std::stoi(v));
    else if (a == "--warmup") o.warmup = std::max(0, std::stoi(v));
    else if (a == "--budget") o.budget_s = std::stod(v);
    else if (a == "--op") {
      Op op;
      std::stringstream ss(v);
      for (std::string field; std::getline(ss, field, ',');) op.f.push_back(field);
      ops.push_back(op);
    } else {
      std::fprintf(stderr, "op_peers: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  const char* omp = std::getenv("OMP_NUM_THREADS");
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  std::printf("INFO threads=%d OMP_NUM_THREADS=%s OPENBLAS_CORETYPE=%s\n", o.threads, omp ? omp : "<unset>",
              coretype ? coretype : "<unset>");
#ifdef HAVE_OPENBLAS
  openblas_set_num_threads(o.threads);
  std::printf("INFO openblas_corename=%s\nINFO openblas_config=%s\n", openblas_get_corename(), openblas_get_config());
#endif
#ifdef HAVE_DNNL
  const dnnl_version_t* v = dnnl_version();
  std::printf("INFO onednn_version=%d.%d.%d onednn_cpu_runtime=%s\n", v->major, v->minor, v->patch,
              v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB" : "other");
#endif
  std::fflush(stdout);
  for (const Op& op : ops) {
    try {
      if (op.f.at(0) == "gemm" && op.f.size() == 6) bench_gemm(op, o);
      else if (op.f.at(0) == "conv" && op.f.size() == 9) bench_conv(op, o);
      else throw std::runtime_error("malformed --op");
    } catch (const std::exception& e) {
      not_available(op.f.empty() ? "?" : op.f[1], "all", e.what());
    }
  }
  return 0;
}
