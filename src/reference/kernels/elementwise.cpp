// Reference kernels of the unary elementwise ops (math, activations, Not).
// Floats compute in their own precision (f16/bf16 in float), integers wrap.
#include "src/reference/kernels/elementwise.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tessel::reference::kernels {

namespace {

using graph::Node;
using Inputs = std::vector<const Tensor*>;
using Outputs = std::vector<Tensor>;

// out[i] = fn(in[i]) for every element, fn taking and returning compute_t<T>.
template <TypeClass K, typename Fn>
void map_unary(const Node& n, const Tensor& in, Tensor& out, Fn fn) {
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (admits<K, T>()) {
      const T* x = in.data<T>();
      T* y = out.data<T>();
      for (int64_t i = 0; i < in.numel(); ++i) store(y, i, compute_t<T>(fn(load(x, i))));
    } else {
      unsupported_dtype(n, in.dtype());
    }
  });
}

// A kernel for an op without attributes.
template <TypeClass K, typename Fn>
Kernel unary(Fn fn) {
  return [fn](const Node& n, const Inputs& in, Outputs& out) { map_unary<K>(n, *in[0], out[0], fn); };
}

// A bool per element of a float tensor: out[i] = fn(in[i], node).
template <typename Fn>
Kernel float_predicate(Fn fn) {
  return [fn](const Node& n, const Inputs& in, Outputs& out) {
    dispatch_dtype(in[0]->dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (admits<TypeClass::kFloat, T>()) {
        const T* x = in[0]->data<T>();
        bool* y = out[0].data<bool>();
        for (int64_t i = 0; i < in[0]->numel(); ++i) y[i] = fn(load(x, i), n);
      } else {
        unsupported_dtype(n, in[0]->dtype());
      }
    });
  };
}

template <typename C>
C shrink(C x, double lambd, double bias) {
  double v = double(x);
  return C(v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0));
}

template <typename C>
C sign_of(C x) {
  if constexpr (std::is_floating_point_v<C>)
    if (std::isnan(x)) return x;
  return x > C(0) ? C(1) : (x < C(0) ? C(-1) : C(0));
}

template <typename C>
C sigmoid(C x) {
  return C(1) / (C(1) + std::exp(-x));
}

// log(1 + exp(x)) without overflow for large x.
template <typename C>
C softplus(C x) {
  return std::max(x, C(0)) + std::log1p(std::exp(-std::fabs(x)));
}

template <typename C>
C hard_sigmoid(C x, C alpha, C beta) {
  return std::max(C(0), std::min(C(1), alpha * x + beta));
}

template <typename C>
C gelu(C x, bool tanh_approx) {
  if (tanh_approx) {
    const C k = C(0.7978845608028654);  // sqrt(2 / pi)
    return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
  }
  return C(0.5) * x * (C(1) + std::erf(x * C(0.7071067811865476)));  // x / sqrt(2)
}

template <typename C>
C elu(C x, C alpha) {
  return x < C(0) ? alpha * (std::exp(x) - C(1)) : x;
}

// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
template <typename C>
C celu(C x, C alpha) {
  return std::max(C(0), x) + std::min(C(0), alpha * (std::exp(x / alpha) - C(1)));
}

template <typename C>
C selu(C x, C alpha, C gamma) {
  return gamma * (x <= C(0) ? alpha * std::exp(x) - alpha : x);
}

// A kernel for an op whose lambda fn(x, a) takes the float attribute `attr`
// as a compute-type value.
template <typename Fn>
Kernel unary_with_float_attr(const char* attr, Fn fn) {
  std::string name = attr;
  return [name, fn](const Node& n, const Inputs& in, Outputs& out) {
    double a = n.attrs.get_float(name);
    map_unary<TypeClass::kFloat>(n, *in[0], out[0], [a, fn](auto x) { return fn(x, decltype(x)(a)); });
  };
}

void register_math(KernelRegistry& r) {
  constexpr TypeClass F = TypeClass::kFloat;
  r.add("Exp", unary<F>([](auto x) { return std::exp(x); }));
  r.add("Log", unary<F>([](auto x) { return std::log(x); }));
  r.add("Sqrt", unary<F>([](auto x) { return std::sqrt(x); }));
  r.add("Reciprocal", unary<F>([](auto x) { return decltype(x)(1) / x; }));
  r.add("Erf", unary<F>([](auto x) { return std::erf(x); }));
  r.add("Tanh", unary<F>([](auto x) { return std::tanh(x); }));
  r.add("Sin", unary<F>([](auto x) { return std::sin(x); }));
  r.add("Cos", unary<F>([](auto x) { return std::cos(x); }));
  r.add("Tan", unary<F>([](auto x) { return std::tan(x); }));
  r.add("Asin", unary<F>([](auto x) { return std::asin(x); }));
  r.add("Acos", unary<F>([](auto x) { return std::acos(x); }));
  r.add("Atan", unary<F>([](auto x) { return std::atan(x); }));
  r.add("Sinh", unary<F>([](auto x) { return std::sinh(x); }));
  r.add("Cosh", unary<F>([](auto x) { return std::cosh(x); }));
  r.add("Asinh", unary<F>([](auto x) { return std::asinh(x); }));
  r.add("Acosh", unary<F>([](auto x) { return std::acosh(x); }));
  r.add("Atanh", unary<F>([](auto x) { return std::atanh(x); }));
  r.add("IsNaN", float_predicate([](auto x, const Node&) { return std::isnan(x); }));
  r.add("IsInf", float_predicate([](auto x, const Node& n) {
          bool negative = n.attrs.get_int("detect_negative") != 0,
               positive = n.attrs.get_int("detect_positive") != 0;
          return std::isinf(x) && (x > 0 ? positive : negative);
        }));
  r.add("Floor", unary<F>([](auto x) { return std::floor(x); }));
  r.add("Ceil", unary<F>([](auto x) { return std::ceil(x); }));
  r.add("Round", unary<F>([](auto x) { return std::nearbyint(x); }));  // halves to even
  r.add("Neg", unary<TypeClass::kSignedNumeric>([](auto x) { return wrap_neg(x); }));
  r.add("Abs", unary<TypeClass::kNumeric>([](auto x) { return x < decltype(x)(0) ? wrap_neg(x) : x; }));
  r.add("Sign", unary<TypeClass::kNumeric>([](auto x) { return sign_of(x); }));
  r.add("Not", unary<TypeClass::kBool>([](auto x) { return !x; }));
  r.add("BitwiseNot", unary<TypeClass::kInteger>([](auto x) {
          if constexpr (is_int_v<decltype(x)>)
            return decltype(x)(~x);
          else
            return x;
        }));
}

void register_activations(KernelRegistry& r) {
  constexpr TypeClass F = TypeClass::kFloat;
  r.add("Sigmoid", unary<F>([](auto x) { return sigmoid(x); }));
  r.add("Softplus", unary<F>([](auto x) { return softplus(x); }));
  r.add("Relu",
        unary<TypeClass::kSignedNumeric>([](auto x) { return x < decltype(x)(0) ? decltype(x)(0) : x; }));
  r.add("HardSwish", unary<F>([](auto x) {
          using C = decltype(x);
          return x * hard_sigmoid(x, C(1) / C(6), C(0.5));
        }));
  r.add("LeakyRelu", [](const Node& n, const Inputs& in, Outputs& out) {
    double alpha = n.attrs.get_float("alpha");
    map_unary<F>(n, *in[0], out[0], [alpha](auto x) { return x < 0 ? decltype(x)(alpha) * x : x; });
  });
  r.add("HardSigmoid", [](const Node& n, const Inputs& in, Outputs& out) {
    double alpha = n.attrs.get_float("alpha"), beta = n.attrs.get_float("beta");
    map_unary<F>(n, *in[0], out[0], [alpha, beta](auto x) {
      using C = decltype(x);
      return hard_sigmoid(x, C(alpha), C(beta));
    });
  });
  r.add("Softsign", unary<F>([](auto x) { return x / (decltype(x)(1) + std::fabs(x)); }));
  r.add("Mish", unary<F>([](auto x) { return x * std::tanh(softplus(x)); }));
  r.add("Elu", unary_with_float_attr("alpha", [](auto x, auto a) { return elu(x, a); }));
  r.add("Celu", unary_with_float_attr("alpha", [](auto x, auto a) { return celu(x, a); }));
  r.add("ThresholdedRelu",
        unary_with_float_attr("alpha", [](auto x, auto a) { return x > a ? x : decltype(x)(0); }));
  r.add("Selu", [](const Node& n, const Inputs& in, Outputs& out) {
    double alpha = n.attrs.get_float("alpha"), gamma = n.attrs.get_float("gamma");
    map_unary<F>(n, *in[0], out[0], [alpha, gamma](auto x) {
      using C = decltype(x);
      return selu(x, C(alpha), C(gamma));
    });
  });
  r.add("Swish", unary_with_float_attr("alpha", [](auto x, auto a) { return x * sigmoid(a * x); }));
  r.add("Shrink", [](const Node& n, const Inputs& in, Outputs& out) {
    double lambd = n.attrs.get_float("lambd"), bias = n.attrs.get_float("bias");
    map_unary<TypeClass::kNumeric>(n, *in[0], out[0],
                                   [lambd, bias](auto x) { return shrink(x, lambd, bias); });
  });
  r.add("Gelu", [](const Node& n, const Inputs& in, Outputs& out) {
    bool tanh_approx = n.attrs.get_string("approximate") == "tanh";
    map_unary<F>(n, *in[0], out[0], [tanh_approx](auto x) { return gelu(x, tanh_approx); });
  });
}

}  // namespace

void register_elementwise(KernelRegistry& r) {
  register_math(r);
  register_activations(r);
  register_elementwise_binary(r);
  register_elementwise_special(r);
}

}  // namespace tessel::reference::kernels
