// The interpreter's expression evaluator: C semantics per dtype (scalar_semantics.h:
// integers in int64 wrapped to their width, f32/f16/bf16 in float, f64 in double),
// checked loads, and the scratch buffers whose unwritten elements may not be read.
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "ir/tensor/interpreter_program.h"
#include "ir/tensor/scalar_semantics.h"

namespace tessel::tir::interp {

namespace {

template <typename T>
Value call_value(Intrinsic op, T x, T y) {
  if (op == Intrinsic::k_isnan) return int_value(std::isnan(x));
  if (op == Intrinsic::k_isinf) return int_value(std::isinf(x));
  T r = apply_intrinsic(op, x, y);
  if constexpr (std::is_same_v<T, float>)
    return float_value(r);
  else
    return double_value(r);
}

// The bits of v, a value of dtype `from` (its low dtype_size bytes), read as
// `to`, a dtype of the same size (bitcast_allowed).
Value bitcast_value(Value v, DType from, DType to) {
  uint64_t bits = 0;
  if (from == DType::kF32) {
    bits = std::bit_cast<uint32_t>(v.f);
  } else if (from == DType::kF64) {
    bits = std::bit_cast<uint64_t>(v.d);
  } else {
    bits = uint64_t(v.i);
  }
  if (to == DType::kF32) return float_value(std::bit_cast<float>(uint32_t(bits)));
  if (to == DType::kF64) return double_value(std::bit_cast<double>(bits));
  return int_value(wrap_to(to, int64_t(bits)));
}

Value convert_integer_or_bool(double d, DType to) {
  if (to == DType::kBool) return int_value(d != 0);
  return int_value(wrap_to(to, float_to_int(d)));
}

[[noreturn]] void no_float_bits() {
  TESSEL_ICHECK(false) << "a bitwise operation on floats";
  std::abort();
}

// Casts from and to the storage-only types, whose values are their codes.
Value convert_small(Value v, DType from, DType to) {
  NumClass fc = num_class(from);
  if (is_small(from)) {
    double d = small_types::decode(small_format(from), uint8_t(v.i));
    if (is_small(to)) return int_value(small_types::encode(small_format(to), d, true));
    if (is_integer(to) || to == DType::kBool) return convert_integer_or_bool(d, to);
    return to == DType::kF64 ? double_value(d) : float_value(float(float_stored_value(to, d)));
  }
  small_types::Format f = small_format(to);
  if (small_types::is_integer_format(f) && fc == NumClass::kI)
    return int_value(int64_t(uint64_t(v.i) & ((1u << small_types::width_bits(f)) - 1)));
  double d = fc == NumClass::kI   ? (from == DType::kU64 ? double(uint64_t(v.i)) : double(v.i))
             : fc == NumClass::kF ? double(v.f)
                                  : v.d;
  return int_value(small_types::encode(f, d, true));
}

Value convert(Value v, DType from, DType to) {
  if (is_small(from) || is_small(to)) return convert_small(v, from, to);
  NumClass fc = num_class(from);
  if (to == DType::kBool)
    return int_value(fc == NumClass::kI ? v.i != 0 : fc == NumClass::kF ? v.f != 0 : v.d != 0);
  if (is_integer(to)) {
    int64_t x = fc == NumClass::kI ? v.i : float_to_int(fc == NumClass::kF ? double(v.f) : v.d);
    return int_value(wrap_to(to, x));
  }
  if (from == DType::kU64) {  // held as its bits in the int64
    uint64_t u = uint64_t(v.i);
    return to == DType::kF64 ? double_value(double(u)) : float_value(float(float_stored_value(to, float(u))));
  }
  if (to == DType::kF64)
    return double_value(fc == NumClass::kI ? double(v.i) : fc == NumClass::kF ? double(v.f) : v.d);
  float f = fc == NumClass::kI ? float(v.i) : fc == NumClass::kF ? v.f : float(v.d);
  return float_value(float(float_stored_value(to, f)));  // f16/bf16: rounded to their precision
}

}  // namespace

std::string element_str(const BufferNode& buffer, const int64_t* indices, int count) {
  std::ostringstream os;
  os << buffer.name << "[";
  for (int d = 0; d < count; ++d) os << (d ? ", " : "") << indices[d];
  os << "]";
  return os.str();
}

void fail(const Env& env, const std::string& message) {
  if (env.block_name) throw InterpreterError(message + " (in block " + *env.block_name + ")");
  throw InterpreterError(message);
}

std::unique_ptr<BufInst> make_scratch(const BufferNode* node) {
  auto buf = std::make_unique<BufInst>();
  buf->node = node;
  Value poison;
  switch (num_class(node->dtype)) {
    case NumClass::kF: poison = float_value(std::numeric_limits<float>::quiet_NaN()); break;
    case NumClass::kD: poison = double_value(std::numeric_limits<double>::quiet_NaN()); break;
    case NumClass::kI: poison = int_value(wrap_to(node->dtype, 0x5a5a5a5a5a5a5a5a)); break;
  }
  size_t n = size_t(node->storage_elements());
  buf->data.assign(n, poison);
  buf->written.assign(std::max<size_t>(n, 1), 0);  // non-empty: tracked even when zero-sized
  return buf;
}

int64_t Evaluator::offset(const BufInst& buf, const int32_t* index_ids, int count, bool store) const {
  const BufferNode& node = *buf.node;
  int64_t off = 0;
  bool in_bounds = true;
  for (int d = 0; d < count; ++d) {
    int64_t i = eval(index_ids[d]).i;
    in_bounds &= uint64_t(i) < uint64_t(node.shape[d]);
    off += i * node.strides[d];
  }
  if (in_bounds) return off;
  // Rare path: evaluate the indices again (they are pure) for the message.
  std::vector<int64_t> indices;
  for (int d = 0; d < count; ++d) indices.push_back(eval(index_ids[d]).i);
  fail(env_, std::string("out-of-bounds ") + (store ? "store to " : "load of ") +
                 element_str(node, indices.data(), count) + ": buffer shape is " + dims_str(node.shape));
}

Value Evaluator::eval_load(const ENode& n) const {
  const BufInst& buf = *env_.bufs[n.a];
  const int32_t* ids = prog_.args.data() + n.b;
  int64_t off = offset(buf, ids, n.c, false);
  if (!buf.written.empty() && !buf.written[off]) {
    std::vector<int64_t> indices;
    for (int d = 0; d < n.c; ++d) indices.push_back(eval(ids[d]).i);
    fail(env_, "read of uninitialised " + element_str(*buf.node, indices.data(), n.c));
  }
  return buf.data[off];
}

Value Evaluator::eval_cast(const ENode& n) const {
  return convert(eval(n.a), DType(n.aux), n.dtype);
}

Value Evaluator::eval(int32_t id) const {
  const ENode& n = nodes_[id];
  switch (n.op) {
    case EOp::kImm: return n.imm;
    case EOp::kVar: return env_.vars[n.a];
#define TESSEL_ARITH(name, int_expr, float_expr, unsigned_expr) \
  case EOp::k##name##I: {                                       \
    int64_t x = eval(n.a).i, y = eval(n.b).i;                   \
    return int_value(wrap_to(n.dtype, int_expr));               \
  }                                                             \
  case EOp::k##name##F: {                                       \
    float x = eval(n.a).f, y = eval(n.b).f;                     \
    return float_value(float_expr);                             \
  }                                                             \
  case EOp::k##name##D: {                                       \
    double x = eval(n.a).d, y = eval(n.b).d;                    \
    return double_value(float_expr);                            \
  }                                                             \
  case EOp::k##name##U: {                                       \
    uint64_t x = uint64_t(eval(n.a).i);                         \
    uint64_t y = uint64_t(eval(n.b).i);                         \
    return int_value(int64_t(unsigned_expr));                   \
  }
      TESSEL_ARITH(Add, wrapping_add(x, y), x + y, x + y)
      TESSEL_ARITH(Sub, wrapping_sub(x, y), x - y, x - y)
      TESSEL_ARITH(Mul, wrapping_mul(x, y), x * y, x * y)
      TESSEL_ARITH(Div, (y == 0 ? (fail(env_, "integer division by zero"), 0) : trunc_div(x, y)), x / y,
                   (y == 0 ? (fail(env_, "integer division by zero"), 0) : x / y))
      TESSEL_ARITH(FloorDiv, (y == 0 ? (fail(env_, "integer division by zero"), 0) : floor_div(x, y)),
                   float_floor_div(x, y), (y == 0 ? (fail(env_, "integer division by zero"), 0) : x / y))
      TESSEL_ARITH(FloorMod, (y == 0 ? (fail(env_, "integer modulo by zero"), 0) : floor_mod(x, y)),
                   float_floor_mod(x, y), (y == 0 ? (fail(env_, "integer modulo by zero"), 0) : x % y))
      TESSEL_ARITH(Min, std::min(x, y), float_min(x, y), std::min(x, y))
      TESSEL_ARITH(Max, std::max(x, y), float_max(x, y), std::max(x, y))
      // The bitwise kinds have integer operands only (expr.h): their float forms never run.
      TESSEL_ARITH(BitAnd, x & y, (no_float_bits(), x + y), x & y)
      TESSEL_ARITH(BitOr, x | y, (no_float_bits(), x + y), x | y)
      TESSEL_ARITH(BitXor, x ^ y, (no_float_bits(), x + y), x ^ y)
      TESSEL_ARITH(Shl, shift_left_bits(x, y), (no_float_bits(), x + y),
                   uint64_t(shift_left_bits(int64_t(x), int64_t(y))))
      TESSEL_ARITH(Shr, shift_right_bits(x, y), (no_float_bits(), x + y), shift_right_u64(x, y))
#undef TESSEL_ARITH
#define TESSEL_CMP(name, op)                  \
  case EOp::k##name##I: {                     \
    int64_t x = eval(n.a).i, y = eval(n.b).i; \
    return int_value(x op y);                 \
  }                                           \
  case EOp::k##name##F: {                     \
    float x = eval(n.a).f, y = eval(n.b).f;   \
    return int_value(x op y);                 \
  }                                           \
  case EOp::k##name##D: {                     \
    double x = eval(n.a).d, y = eval(n.b).d;  \
    return int_value(x op y);                 \
  }                                           \
  case EOp::k##name##U: {                     \
    uint64_t x = uint64_t(eval(n.a).i);       \
    uint64_t y = uint64_t(eval(n.b).i);       \
    return int_value(x op y);                 \
  }
      TESSEL_CMP(EQ, ==)
      TESSEL_CMP(NE, !=)
      TESSEL_CMP(LT, <)
      TESSEL_CMP(LE, <=)
      TESSEL_CMP(GT, >)
      TESSEL_CMP(GE, >=)
#undef TESSEL_CMP
    // Short-circuit, like C: a guard may protect a load from going out of bounds.
    case EOp::kAnd: return int_value(eval(n.a).i != 0 && eval(n.b).i != 0);
    case EOp::kOr: return int_value(eval(n.a).i != 0 || eval(n.b).i != 0);
    case EOp::kNot: return int_value(eval(n.a).i == 0);
    case EOp::kSelect: return eval(n.a).i != 0 ? eval(n.b) : eval(n.c);
    case EOp::kCast: return eval_cast(n);
    case EOp::kLoad: return eval_load(n);
    case EOp::kCallF: {
      float x = eval(n.a).f, y = n.b >= 0 ? eval(n.b).f : 0.0f;
      return call_value(Intrinsic(n.aux), x, y);
    }
    case EOp::kCallD: {
      double x = eval(n.a).d, y = n.b >= 0 ? eval(n.b).d : 0.0;
      return call_value(Intrinsic(n.aux), x, y);
    }
    case EOp::kBitcast: return bitcast_value(eval(n.a), DType(n.aux), n.dtype);
  }
  TESSEL_ICHECK(false) << "unknown interpreter opcode " << int(n.op);
  return n.imm;
}

}  // namespace tessel::tir::interp
