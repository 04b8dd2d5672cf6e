// Reference kernels of the broadcasting elementwise ops: arithmetic, PRelu,
// Pow, Mod, comparisons, logic, variadic Max/Min/Sum/Mean and Where.
// Integer arithmetic wraps around in the element type; integer Div truncates
// toward zero (like C); an integer division by zero is a UserError.
#include <algorithm>
#include <cmath>
#include <limits>

#include "src/reference/kernels/broadcast.h"
#include "src/reference/kernels/elementwise.h"

namespace tessel::reference::kernels {

namespace {

using graph::Node;
using Inputs = std::vector<const Tensor*>;
using Outputs = std::vector<Tensor>;

// out = fn(a, b) with broadcasting; a and b share storage type T, fn takes
// two compute_t<T> and returns compute_t<T>, or bool when kBoolOut.
template <TypeClass K, bool kBoolOut, typename Fn>
void map_binary(const Node& n, const Tensor& a, const Tensor& b, Tensor& out, Fn fn) {
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (admits<K, T>()) {
      using O = std::conditional_t<kBoolOut, bool, T>;
      const T* x = a.data<T>();
      const T* y = b.data<T>();
      O* z = out.data<O>();
      for_each_broadcast<2>(out.shape(), {&a.shape(), &b.shape()}, [&](int64_t i, const auto& off) {
        store(z, i, fn(load(x, off[0]), load(y, off[1])));
      });
    } else {
      unsupported_dtype(n, a.dtype());
    }
  });
}

template <TypeClass K, bool kBoolOut = false, typename Fn>
Kernel binary(Fn fn) {
  return [fn](const Node& n, const Inputs& in, Outputs& out) {
    map_binary<K, kBoolOut>(n, *in[0], *in[1], out[0], fn);
  };
}

// fn on integers; the float instantiations the dtype dispatch also makes never run.
template <typename C, typename Fn>
C bits(C a, C b, Fn fn) {
  if constexpr (is_int_v<C>)
    return C(fn(a, b));
  else
    return a + b;
}

// An unsigned shift; by the type's width or more, 0.
template <typename C>
C shift(C a, C b, bool left) {
  if constexpr (is_int_v<C> && std::is_unsigned_v<C>) {
    if (b >= C(sizeof(C) * 8)) return C(0);
    return left ? C(a << b) : C(a >> b);
  } else {
    return a;
  }
}

template <typename C>
C divide(const Node& n, C a, C b) {
  if constexpr (is_int_v<C>) {
    TESSEL_USER_CHECK(b != C(0), n.span()) << "divisor is 0: integer division by zero";
    if constexpr (std::is_signed_v<C>)
      if (b == C(-1)) return wrap_neg(a);  // MIN / -1 overflows
    return C(a / b);
  } else {
    return a / b;
  }
}

// fmod: the remainder has the dividend's sign (C's %); otherwise the divisor's (Python's %).
template <typename C>
C modulo(const Node& n, C a, C b, bool fmod) {
  if constexpr (is_int_v<C>) {
    TESSEL_USER_CHECK(b != C(0), n.span()) << "divisor is 0: integer division by zero (modulo)";
    C r = (std::is_signed_v<C> && b == C(-1)) ? C(0) : C(a % b);
    if (!fmod && r != C(0) && ((r < C(0)) != (b < C(0)))) r = C(r + b);
    return r;
  } else {
    return std::fmod(a, b);
  }
}

template <typename C>
C max_of(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
  return a < b ? b : a;
}

template <typename C>
C min_of(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
  return b < a ? b : a;
}

void register_arithmetic(KernelRegistry& r) {
  constexpr TypeClass N = TypeClass::kNumeric;
  r.add("Add", binary<N>([](auto a, auto b) { return wrap_add(a, b); }));
  r.add("Sub", binary<N>([](auto a, auto b) { return wrap_sub(a, b); }));
  r.add("Mul", binary<N>([](auto a, auto b) { return wrap_mul(a, b); }));
  r.add("Div", [](const Node& n, const Inputs& in, Outputs& out) {
    map_binary<N, false>(n, *in[0], *in[1], out[0], [&n](auto a, auto b) { return divide(n, a, b); });
  });
  // The shape function made the slope broadcast to x's shape (one way).
  r.add("PRelu", binary<N>([](auto x, auto slope) { return x < decltype(x)(0) ? wrap_mul(slope, x) : x; }));
  r.add("Mod", [](const Node& n, const Inputs& in, Outputs& out) {
    bool fmod = n.attrs.get_int("fmod") != 0;
    map_binary<N, false>(n, *in[0], *in[1], out[0],
                         [&n, fmod](auto a, auto b) { return modulo(n, a, b, fmod); });
  });
}

void register_comparisons(KernelRegistry& r) {
  constexpr TypeClass N = TypeClass::kNumeric;
  r.add("Equal", binary<TypeClass::kAny, true>([](auto a, auto b) { return a == b; }));
  r.add("BitwiseAnd", binary<TypeClass::kInteger>(
                          [](auto a, auto b) { return bits(a, b, [](auto x, auto y) { return x & y; }); }));
  r.add("BitwiseOr", binary<TypeClass::kInteger>(
                         [](auto a, auto b) { return bits(a, b, [](auto x, auto y) { return x | y; }); }));
  r.add("BitwiseXor", binary<TypeClass::kInteger>(
                          [](auto a, auto b) { return bits(a, b, [](auto x, auto y) { return x ^ y; }); }));
  r.add("BitShift", [](const Node& n, const Inputs& in, Outputs& out) {
    bool left = n.attrs.get_string("direction") == "LEFT";
    map_binary<TypeClass::kUnsigned, false>(n, *in[0], *in[1], out[0],
                                            [left](auto a, auto b) { return shift(a, b, left); });
  });
  r.add("Greater", binary<N, true>([](auto a, auto b) { return a > b; }));
  r.add("Less", binary<N, true>([](auto a, auto b) { return a < b; }));
  r.add("GreaterOrEqual", binary<N, true>([](auto a, auto b) { return a >= b; }));
  r.add("LessOrEqual", binary<N, true>([](auto a, auto b) { return a <= b; }));
  constexpr TypeClass B = TypeClass::kBool;
  r.add("And", binary<B>([](bool a, bool b) { return a && b; }));
  r.add("Or", binary<B>([](bool a, bool b) { return a || b; }));
  r.add("Xor", binary<B>([](bool a, bool b) { return a != b; }));
}

// out = fold(fn, inputs) with broadcasting; the running value lives in out.
template <TypeClass K, typename Fn>
void fold_variadic(const Node& n, const Inputs& in, Tensor& out, Fn fn) {
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (admits<K, T>()) {
      T* z = out.data<T>();
      const T* x0 = in[0]->data<T>();
      for_each_broadcast<1>(out.shape(), {&in[0]->shape()},
                            [&](int64_t i, const auto& off) { z[i] = x0[off[0]]; });
      for (size_t k = 1; k < in.size(); ++k) {
        const T* xk = in[k]->data<T>();
        for_each_broadcast<1>(out.shape(), {&in[k]->shape()}, [&](int64_t i, const auto& off) {
          store(z, i, fn(load(z, i), load(xk, off[0])));
        });
      }
    } else {
      unsupported_dtype(n, out.dtype());
    }
  });
}

void register_variadic(KernelRegistry& r) {
  constexpr TypeClass N = TypeClass::kNumeric;
  r.add("Max", [](const Node& n, const Inputs& in, Outputs& out) {
    fold_variadic<N>(n, in, out[0], [](auto a, auto b) { return max_of(a, b); });
  });
  r.add("Min", [](const Node& n, const Inputs& in, Outputs& out) {
    fold_variadic<N>(n, in, out[0], [](auto a, auto b) { return min_of(a, b); });
  });
  r.add("Sum", [](const Node& n, const Inputs& in, Outputs& out) {
    fold_variadic<N>(n, in, out[0], [](auto a, auto b) { return wrap_add(a, b); });
  });
  r.add("Mean", [](const Node& n, const Inputs& in, Outputs& out) {
    fold_variadic<TypeClass::kFloat>(n, in, out[0], [](auto a, auto b) { return a + b; });
    double count = double(in.size());
    for (int64_t i = 0; i < out[0].numel(); ++i) out[0].set_f64(i, out[0].get_f64(i) / count);
  });
}

// Integer power by squaring, wrapping; a negative exponent truncates 1 / x^-e.
template <typename C, typename E>
C int_pow(C x, E e) {
  if (e < E(0)) {
    if (x == C(1)) return C(1);
    if constexpr (std::is_signed_v<C>)
      if (x == C(-1)) return (e % 2 == 0) ? C(1) : C(-1);
    return C(0);
  }
  C result = C(1);
  for (; e != E(0); e /= E(2)) {
    if (e % E(2) != E(0)) result = wrap_mul(result, x);
    x = wrap_mul(x, x);
  }
  return result;
}

// The result has the base's type: floats compute in the base's precision, an
// integer base with a float exponent computes in double and truncates.
template <typename C, typename E>
C pow_value(C x, E e) {
  if constexpr (is_int_v<C> && is_int_v<E>)
    return int_pow(x, e);
  else if constexpr (is_int_v<C>)
    return convert_value<C>(std::pow(double(x), double(e)));
  else
    return std::pow(x, C(e));
}

void pow_kernel(const Node& n, const Inputs& in, Outputs& out) {
  const Tensor &a = *in[0], &b = *in[1];
  dispatch_dtype(a.dtype(), [&](auto base_tag) {
    using T = decltype(base_tag);
    if constexpr (!admits<TypeClass::kNumeric, T>()) {
      unsupported_dtype(n, a.dtype());
    } else {
      dispatch_dtype(b.dtype(), [&](auto exp_tag) {
        using U = decltype(exp_tag);
        if constexpr (!admits<TypeClass::kNumeric, U>()) {
          unsupported_dtype(n, b.dtype());
        } else {
          const T* x = a.data<T>();
          const U* y = b.data<U>();
          T* z = out[0].data<T>();
          for_each_broadcast<2>(out[0].shape(), {&a.shape(), &b.shape()}, [&](int64_t i, const auto& off) {
            store(z, i, pow_value(load(x, off[0]), load(y, off[1])));
          });
        }
      });
    }
  });
}

void where_kernel(const Node&, const Inputs& in, Outputs& out) {
  const Tensor &c = *in[0], &a = *in[1], &b = *in[2];
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const bool* cond = c.data<bool>();
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    T* z = out[0].data<T>();
    for_each_broadcast<3>(out[0].shape(), {&c.shape(), &a.shape(), &b.shape()},
                          [&](int64_t i, const auto& off) { z[i] = cond[off[0]] ? x[off[1]] : y[off[2]]; });
  });
}

}  // namespace

void register_elementwise_binary(KernelRegistry& r) {
  register_arithmetic(r);
  register_comparisons(r);
  register_variadic(r);
  r.add("Pow", pow_kernel);
  r.add("Where", where_kernel);
}

}  // namespace tessel::reference::kernels
