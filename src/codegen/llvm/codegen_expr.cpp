// Expressions of the tensor IR as LLVM values, with the semantics of
// ir/tensor/scalar_semantics.h (the interpreter's): wrap-around integers, C
// comparisons, std::min/std::max on floats, x86 float-to-int conversion.
#include <llvm/IR/Intrinsics.h>

#include "ir/core/diagnostics.h"
#include "ir/tensor/float_bounds.h"
#include "src/codegen/llvm/codegen_llvm.h"

namespace tessel::codegen {

using namespace tir;

llvm::Type* CodegenLLVM::reg_type(DType t) {
  switch (t) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16: return b_.getFloatTy();
    case DType::kF64: return b_.getDoubleTy();
    case DType::kI8:
    case DType::kU8: return b_.getInt8Ty();
    case DType::kI16:
    case DType::kU16: return b_.getInt16Ty();
    case DType::kI32:
    case DType::kU32: return b_.getInt32Ty();
    case DType::kI64:
    case DType::kU64: return b_.getInt64Ty();
    case DType::kBool: return b_.getInt1Ty();
    default: return b_.getInt8Ty();  // the storage-only types: their codes
  }
  TESSEL_ICHECK(false) << "unknown dtype";
  return nullptr;
}

llvm::Type* CodegenLLVM::mem_type(DType t) {
  switch (t) {
    case DType::kF16: return b_.getHalfTy();
    case DType::kBF16: return b_.getInt16Ty();
    case DType::kBool: return b_.getInt8Ty();
    default: return reg_type(t);
  }
}

namespace {

// Unsigned integers and bool (floats are signed).
bool is_unsigned(DType t) {
  return !is_signed(t);
}

// A float to an integer of 32 bits or fewer where the value is never NaN and
// within int32's range (a clamp, a NaN guard: ir/tensor/float_bounds.h): the
// int64 conversion and wrap that the semantics ask for gives what converting
// to int32 gives, one instruction in vector lanes, where int64 has none on
// AVX2 and the loop would run one lane at a time.
bool converts_within_int32(const CastNode& c) {
  DType from = c.value->dtype, to = c.dtype;
  if ((from != DType::kF32 && from != DType::kF64) || !is_integer(to) || is_small(to) || dtype_size(to) > 4)
    return false;
  return float_within(c.value, -2147483648.0, 2147483648.0);
}

}  // namespace

llvm::Value* CodegenLLVM::emit(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kIntImm: {
      const auto& imm = static_cast<const IntImmNode&>(*e);
      return llvm::ConstantInt::get(reg_type(e->dtype), uint64_t(imm.value), /*IsSigned=*/true);
    }
    case ExprKind::kFloatImm: {
      double v = static_cast<const FloatImmNode&>(*e).value;
      return llvm::ConstantFP::get(reg_type(e->dtype), e->dtype == DType::kF64 ? v : double(float(v)));
    }
    case ExprKind::kVar: {
      auto it = scope_.vars.find(static_cast<const VarNode*>(e.get()));
      TESSEL_ICHECK(it != scope_.vars.end())
          << "variable " << static_cast<const VarNode&>(*e).name << " is used outside its loop";
      return it->second;
    }
    case ExprKind::kNot: return b_.CreateNot(emit(static_cast<const NotNode&>(*e).a));
    case ExprKind::kSelect: return emit_select(static_cast<const SelectNode&>(*e));
    case ExprKind::kCast: {
      const auto& c = static_cast<const CastNode&>(*e);
      if (converts_within_int32(c))
        return b_.CreateTrunc(b_.CreateFPToSI(emit(c.value), b_.getInt32Ty()), reg_type(e->dtype));
      return emit_cast(e->dtype, c.value->dtype, emit(c.value));
    }
    case ExprKind::kLoad: return emit_load(static_cast<const LoadNode&>(*e));
    case ExprKind::kCall: return emit_call(static_cast<const CallNode&>(*e));
    case ExprKind::kAnd:
    case ExprKind::kOr: return emit_logical(*e);
    default: return emit_binary(*e);
  }
}

llvm::Value* CodegenLLVM::emit_binary(const ExprNode& e) {
  const Expr& ea = binary_a(e);
  DType t = ea->dtype;
  llvm::Value* a = emit(ea);
  llvm::Value* b = emit(binary_b(e));
  if (is_comparison(e.kind)) {
    if (is_float(t)) {
      static constexpr llvm::CmpInst::Predicate kFloat[] = {llvm::CmpInst::FCMP_OEQ, llvm::CmpInst::FCMP_UNE,
                                                            llvm::CmpInst::FCMP_OLT, llvm::CmpInst::FCMP_OLE,
                                                            llvm::CmpInst::FCMP_OGT, llvm::CmpInst::FCMP_OGE};
      return b_.CreateFCmp(kFloat[int(e.kind) - int(ExprKind::kEQ)], a, b);
    }
    bool u = is_unsigned(t);
    static constexpr llvm::CmpInst::Predicate kSigned[] = {llvm::CmpInst::ICMP_EQ,  llvm::CmpInst::ICMP_NE,
                                                           llvm::CmpInst::ICMP_SLT, llvm::CmpInst::ICMP_SLE,
                                                           llvm::CmpInst::ICMP_SGT, llvm::CmpInst::ICMP_SGE};
    static constexpr llvm::CmpInst::Predicate kUnsigned[] = {
        llvm::CmpInst::ICMP_EQ,  llvm::CmpInst::ICMP_NE,  llvm::CmpInst::ICMP_ULT,
        llvm::CmpInst::ICMP_ULE, llvm::CmpInst::ICMP_UGT, llvm::CmpInst::ICMP_UGE};
    int k = int(e.kind) - int(ExprKind::kEQ);
    return b_.CreateICmp(u ? kUnsigned[k] : kSigned[k], a, b);
  }
  if (is_float(t)) return emit_float_binary(e.kind, a, b);
  bool u = is_unsigned(t);
  switch (e.kind) {
    case ExprKind::kAdd: return b_.CreateAdd(a, b);
    case ExprKind::kSub: return b_.CreateSub(a, b);
    case ExprKind::kMul: return b_.CreateMul(a, b);
    case ExprKind::kMin:
      return b_.CreateBinaryIntrinsic(u ? llvm::Intrinsic::umin : llvm::Intrinsic::smin, a, b);
    case ExprKind::kMax:
      return b_.CreateBinaryIntrinsic(u ? llvm::Intrinsic::umax : llvm::Intrinsic::smax, a, b);
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: return emit_int_division(e.kind, t, a, b);
    case ExprKind::kBitAnd: return b_.CreateAnd(a, b);
    case ExprKind::kBitOr: return b_.CreateOr(a, b);
    case ExprKind::kBitXor: return b_.CreateXor(a, b);
    case ExprKind::kShl:
    case ExprKind::kShr: return emit_shift(e.kind, t, a, b);
    default: break;
  }
  TESSEL_ICHECK(false) << "no LLVM lowering of " << expr_kind_name(e.kind);
  return nullptr;
}

llvm::Value* CodegenLLVM::emit_float_binary(ExprKind kind, llvm::Value* a, llvm::Value* b) {
  // contract: a * b + c may become one fused multiply-add (as C compilers do by default).
  llvm::FastMathFlags contract;
  contract.setAllowContract();
  llvm::IRBuilder<>::FastMathFlagGuard guard(b_);
  b_.setFastMathFlags(contract);
  switch (kind) {
    case ExprKind::kAdd: return b_.CreateFAdd(a, b);
    case ExprKind::kSub: return b_.CreateFSub(a, b);
    case ExprKind::kMul: return b_.CreateFMul(a, b);
    case ExprKind::kDiv: return b_.CreateFDiv(a, b);
    // float_min / float_max of scalar_semantics.h: NaN when either operand is
    // NaN, else the smaller / larger; which of two equal zeros is left open
    // (nsz). As two compares and a select, LLVM merged the NaN test into the
    // comparison and every max of a pool's window cost four instructions;
    // minimum / maximum are a max and one fix-up for a NaN first operand.
    case ExprKind::kMin:
    case ExprKind::kMax: {
      llvm::FastMathFlags nsz;
      nsz.setNoSignedZeros();
      b_.setFastMathFlags(nsz);
      return b_.CreateBinaryIntrinsic(
          kind == ExprKind::kMin ? llvm::Intrinsic::minimum : llvm::Intrinsic::maximum, a, b);
    }
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: {
      llvm::Value* q = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(a, b));
      if (kind == ExprKind::kFloorDiv) return q;
      b_.clearFastMathFlags();  // a - floor(a / b) * b, rounded as the interpreter does
      return b_.CreateFSub(a, b_.CreateFMul(q, b));
    }
    default: break;
  }
  TESSEL_ICHECK(false) << "no float lowering of " << expr_kind_name(kind);
  return nullptr;
}

// Division by zero gives 0 (the interpreter reports it; compiled code must not
// A shift as expr.h defines it: LLVM's shifts are poison from the width on, so
// those amounts (and negative ones, unsigned-huge) select 0, or the sign fill.
llvm::Value* CodegenLLVM::emit_shift(ExprKind kind, DType t, llvm::Value* a, llvm::Value* b) {
  llvm::Type* ty = a->getType();
  unsigned width = ty->getIntegerBitWidth();
  llvm::Value* in_range = b_.CreateICmpULT(b, llvm::ConstantInt::get(ty, width));
  llvm::Value* amount = b_.CreateSelect(in_range, b, llvm::ConstantInt::get(ty, 0));
  if (kind == ExprKind::kShl)
    return b_.CreateSelect(in_range, b_.CreateShl(a, amount), llvm::ConstantInt::get(ty, 0));
  if (is_unsigned(t))
    return b_.CreateSelect(in_range, b_.CreateLShr(a, amount), llvm::ConstantInt::get(ty, 0));
  return b_.CreateAShr(a, b_.CreateSelect(in_range, b, llvm::ConstantInt::get(ty, width - 1)));
}

// trap), division by -1 negates with wrap-around, as scalar_semantics.h says.
llvm::Value* CodegenLLVM::emit_int_division(ExprKind kind, DType t, llvm::Value* a, llvm::Value* b) {
  llvm::Type* ty = a->getType();
  llvm::Value* zero = llvm::ConstantInt::get(ty, 0);
  llvm::Value* one = llvm::ConstantInt::get(ty, 1);
  llvm::Value* is_zero = b_.CreateICmpEQ(b, zero);
  if (is_unsigned(t)) {
    llvm::Value* safe = b_.CreateSelect(is_zero, one, b);
    llvm::Value* r = kind == ExprKind::kFloorMod ? b_.CreateURem(a, safe) : b_.CreateUDiv(a, safe);
    return b_.CreateSelect(is_zero, zero, r);
  }
  llvm::Value* minus_one = b_.CreateICmpEQ(b, llvm::ConstantInt::getSigned(ty, -1));
  llvm::Value* safe = b_.CreateSelect(b_.CreateOr(is_zero, minus_one), one, b);
  llvm::Value* q = b_.CreateSDiv(a, safe);
  llvm::Value* r = b_.CreateSRem(a, safe);
  llvm::Value* result;
  if (kind == ExprKind::kDiv) {
    result = b_.CreateSelect(minus_one, b_.CreateNeg(a), q);
  } else {
    // The remainder is non-zero and its sign differs from the divisor's: step down.
    llvm::Value* adjust =
        b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, safe), zero));
    if (kind == ExprKind::kFloorDiv) {
      result = b_.CreateSelect(minus_one, b_.CreateNeg(a), b_.CreateSub(q, b_.CreateZExt(adjust, ty)));
    } else {
      result = b_.CreateSelect(minus_one, zero, b_.CreateSelect(adjust, b_.CreateAdd(r, safe), r));
    }
  }
  return b_.CreateSelect(is_zero, zero, result);
}

// And/Or short-circuit: when the right operand reads memory it may be guarded
// by the left one, so it gets its own branch; otherwise both are evaluated
// (cheaper, and vectorizable).
llvm::Value* CodegenLLVM::emit_logical(const ExprNode& e) {
  bool is_and = e.kind == ExprKind::kAnd;
  llvm::Value* a = emit(binary_a(e));
  if (!has_unsafe_load(binary_b(e)))
    return is_and ? b_.CreateAnd(a, emit(binary_b(e))) : b_.CreateOr(a, emit(binary_b(e)));
  llvm::Value* shortcut = b_.getInt1(!is_and);
  return is_and ? emit_branches(
                      a, [&] { return emit(binary_b(e)); }, [&] { return shortcut; })
                : emit_branches(
                      a, [&] { return shortcut; }, [&] { return emit(binary_b(e)); });
}

bool CodegenLLVM::has_unsafe_load(const Expr& e) const {
  bool unsafe = false;
  walk_exprs(e, [&](const Expr& sub) {
    const auto* load = sub.as<LoadNode>();
    if (unsafe || !load) return;
    const BufferNode& buffer = *load->buffer;
    for (size_t d = 0; d < load->indices.size() && !unsafe; ++d) {
      ConstBound b = loop_ranges_.bound(load->indices[d]);
      unsafe = !b.min || !b.max || *b.min < 0 || *b.max >= buffer.shape[d];
    }
  });
  return unsafe;
}

llvm::Value* CodegenLLVM::emit_select(const SelectNode& e) {
  llvm::Value* cond = emit(e.cond);
  if (!has_unsafe_load(e.true_value) && !has_unsafe_load(e.false_value))
    return b_.CreateSelect(cond, emit(e.true_value), emit(e.false_value));
  return emit_branches(
      cond, [&] { return emit(e.true_value); }, [&] { return emit(e.false_value); });
}

llvm::Value* CodegenLLVM::emit_branches(llvm::Value* cond, const std::function<llvm::Value*()>& then_value,
                                        const std::function<llvm::Value*()>& else_value) {
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "sel.then", function_);
  llvm::BasicBlock* else_bb = llvm::BasicBlock::Create(ctx_, "sel.else", function_);
  llvm::BasicBlock* join_bb = llvm::BasicBlock::Create(ctx_, "sel.join", function_);
  b_.CreateCondBr(cond, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  llvm::Value* tv = then_value();
  llvm::BasicBlock* then_end = b_.GetInsertBlock();
  b_.CreateBr(join_bb);
  b_.SetInsertPoint(else_bb);
  llvm::Value* fv = else_value();
  llvm::BasicBlock* else_end = b_.GetInsertBlock();
  b_.CreateBr(join_bb);
  b_.SetInsertPoint(join_bb);
  llvm::PHINode* phi = b_.CreatePHI(tv->getType(), 2);
  phi->addIncoming(tv, then_end);
  phi->addIncoming(fv, else_end);
  return phi;
}

llvm::Value* CodegenLLVM::round_to_storage(DType t, llvm::Value* v) {
  if (t == DType::kF16 || t == DType::kBF16) return from_memory(t, to_memory(t, v));
  return v;
}

llvm::Value* CodegenLLVM::to_memory(DType t, llvm::Value* v) {
  switch (t) {
    case DType::kF16: return b_.CreateFPTrunc(v, b_.getHalfTy());
    case DType::kBF16: {  // round to nearest even; NaN stays a quiet NaN (dtype.cpp's float_to_bf16)
      llvm::Value* x = b_.CreateBitCast(v, b_.getInt32Ty());
      llvm::Value* hi = b_.CreateLShr(x, 16);
      llvm::Value* rounding = b_.CreateAdd(b_.getInt32(0x7fff), b_.CreateAnd(hi, 1));
      llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(x, rounding), 16);
      llvm::Value* nan = b_.CreateOr(hi, 0x40);
      llvm::Value* bits = b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan, rounded);
      return b_.CreateTrunc(bits, b_.getInt16Ty());
    }
    case DType::kBool: return b_.CreateZExt(v, b_.getInt8Ty());
    default: return v;
  }
}

llvm::Value* CodegenLLVM::from_memory(DType t, llvm::Value* v) {
  switch (t) {
    case DType::kF16: return b_.CreateFPExt(v, b_.getFloatTy());
    case DType::kBF16:
      return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), 16), b_.getFloatTy());
    case DType::kBool: return b_.CreateICmpNE(v, b_.getInt8(0));
    default: return v;
  }
}

// A cast from or to a storage-only type: the small integers by their bits
// (sign- or zero-extended; truncated), the small floats through double and the
// runtime's conversions (tessel_rt_small_decode / _encode), saturating as the
// tensor IR's Cast does.
llvm::Value* CodegenLLVM::emit_small_cast(DType to, DType from, llvm::Value* v) {
  auto decode = [&](llvm::Value* code, small_types::Format f) {
    llvm::FunctionCallee fn = module_.getOrInsertFunction("tessel_rt_small_decode", b_.getDoubleTy(),
                                                          b_.getInt32Ty(), b_.getInt32Ty());
    return b_.CreateCall(fn, {b_.CreateZExt(code, b_.getInt32Ty()), b_.getInt32(int(f))});
  };
  auto encode = [&](llvm::Value* x, small_types::Format f) {
    llvm::FunctionCallee fn = module_.getOrInsertFunction("tessel_rt_small_encode", b_.getInt32Ty(),
                                                          b_.getDoubleTy(), b_.getInt32Ty(), b_.getInt32Ty());
    return b_.CreateTrunc(b_.CreateCall(fn, {x, b_.getInt32(int(f)), b_.getInt32(1)}), b_.getInt8Ty());
  };
  if (is_small(from)) {
    small_types::Format f = small_format(from);
    if (is_small(to)) return encode(decode(v, f), small_format(to));
    if (small_types::is_integer_format(f) && !is_float(to)) {
      unsigned shift = 8 - unsigned(small_types::width_bits(f));
      bool is_signed_format = f == small_types::Format::kI4 || f == small_types::Format::kI2;
      llvm::Value* value = is_signed_format ? b_.CreateAShr(b_.CreateShl(v, shift), shift)
                                            : b_.CreateAnd(v, b_.getInt8((1u << (8 - shift)) - 1));
      return emit_cast(to, is_signed_format ? DType::kI8 : DType::kU8, value);
    }
    return emit_cast(to, DType::kF64, decode(v, f));
  }
  small_types::Format f = small_format(to);
  if (small_types::is_integer_format(f)) {
    llvm::Value* wide = emit_cast(DType::kI64, from, v);
    return b_.CreateAnd(b_.CreateTrunc(wide, b_.getInt8Ty()),
                        b_.getInt8((1u << small_types::width_bits(f)) - 1));
  }
  return encode(emit_cast(DType::kF64, from, v), f);
}

llvm::Value* CodegenLLVM::emit_cast(DType to, DType from, llvm::Value* v) {
  if (is_small(to) || is_small(from)) return emit_small_cast(to, from, v);
  if (to == from) return v;
  llvm::Type* ty = reg_type(to);
  if (to == DType::kBool) {
    if (is_float(from)) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (is_float(to)) {
    llvm::Value* r;
    if (is_float(from))
      r = b_.CreateFPCast(v, ty);
    else
      r = is_unsigned(from) ? b_.CreateUIToFP(v, ty) : b_.CreateSIToFP(v, ty);
    return round_to_storage(to, r);
  }
  if (is_float(from)) {  // x86's conversion: INT64_MIN for NaN and out-of-range values, then wrap
    llvm::Type* f = v->getType();
    llvm::Value* in_range =
        b_.CreateAnd(b_.CreateFCmpOGE(v, llvm::ConstantFP::get(f, -9223372036854775808.0)),
                     b_.CreateFCmpOLT(v, llvm::ConstantFP::get(f, 9223372036854775808.0)));
    llvm::Value* safe = b_.CreateSelect(in_range, v, llvm::ConstantFP::get(f, 0.0));
    llvm::Value* i =
        b_.CreateSelect(in_range, b_.CreateFPToSI(safe, b_.getInt64Ty()), b_.getInt64(uint64_t(INT64_MIN)));
    return b_.CreateTrunc(i, ty);
  }
  return b_.CreateIntCast(v, ty, /*isSigned=*/!is_unsigned(from));
}

namespace {

int floor_divisions(const Expr& e) {
  int n = 0;
  walk_exprs(e, [&](const Expr& sub) { n += sub->kind == ExprKind::kFloorDiv || sub->kind == ExprKind::kFloorMod; });
  return n;
}

}  // namespace

Expr CodegenLLVM::flat_offset(const BufferNode& buffer, const std::vector<Expr>& indices) {
  Expr offset = int_imm(0);
  for (size_t d = 0; d < indices.size(); ++d) {
    Expr i = indices[d]->dtype == kIndexType ? indices[d] : cast(kIndexType, indices[d]);
    offset = offset + i * buffer.strides[d];
  }
  return offset;
}

// A buffer read as a view of other dimensions, x[p // w, p % w] of a row-major
// [h, w] buffer, is at offset p: when the offset, simplified under the loop
// ranges, has fewer floordivs and floormods (a pair merged back), that simpler
// offset, which the vectorizer sees as consecutive; otherwise null, and the
// plain sum is used.
llvm::Value* CodegenLLVM::view_offset(const BufferNode& buffer, const std::vector<Expr>& indices) {
  int floors = 0;
  for (const Expr& i : indices) floors += floor_divisions(i);
  if (floors == 0) return nullptr;
  Expr simple = loop_ranges_.simplify(flat_offset(buffer, indices));
  return floor_divisions(simple) < floors ? emit(simple) : nullptr;
}

llvm::Value* CodegenLLVM::element_pointer(const BufferNode& buffer, const std::vector<Expr>& indices) {
  auto it = scope_.buffers.find(&buffer);
  TESSEL_ICHECK(it != scope_.buffers.end()) << "buffer " << buffer.name << " is used outside its allocation";
  TESSEL_ICHECK(int(indices.size()) == buffer.rank())
      << "buffer " << buffer.name << " indexed with " << indices.size() << " indices";
  if (llvm::Value* flat = view_offset(buffer, indices))
    return b_.CreateInBoundsGEP(mem_type(buffer.dtype), it->second, flat);
  llvm::Value* offset = b_.getInt64(0);
  for (size_t d = 0; d < indices.size(); ++d) {
    llvm::Value* i = b_.CreateSExtOrTrunc(emit(indices[d]), b_.getInt64Ty());
    offset = b_.CreateAdd(offset, b_.CreateMul(i, b_.getInt64(uint64_t(buffer.strides[d]))));
  }
  return b_.CreateInBoundsGEP(mem_type(buffer.dtype), it->second, offset);
}

void CodegenLLVM::tag_access(llvm::Instruction* inst, const BufferNode& buffer) {
  if (access_groups_.empty()) return;
  for (size_t level = 0; level < access_groups_.size(); ++level)
    if (loop_local_buffers_[level].count(&buffer)) return;
  if (access_groups_.size() == 1) {
    inst->setMetadata(llvm::LLVMContext::MD_access_group, access_groups_[0]);
    return;
  }
  std::vector<llvm::Metadata*> groups(access_groups_.begin(), access_groups_.end());
  inst->setMetadata(llvm::LLVMContext::MD_access_group, llvm::MDNode::get(ctx_, groups));
}

llvm::Value* CodegenLLVM::emit_load(const LoadNode& e) {
  llvm::Type* ty = mem_type(e.buffer->dtype);
  llvm::LoadInst* load = b_.CreateLoad(ty, element_pointer(*e.buffer, e.indices));
  load->setAlignment(llvm::Align(dtype_size(e.buffer->dtype)));
  tag_access(load, *e.buffer);
  return from_memory(e.buffer->dtype, load);
}

llvm::Value* CodegenLLVM::emit_call(const CallNode& e) {
  DType t = e.args[0]->dtype;
  llvm::Value* x = emit(e.args[0]);
  if (e.op == Intrinsic::k_bitcast) {  // a bool (i1 in registers) is its byte, 0 or 1
    if (t == DType::kBool) x = b_.CreateZExt(x, b_.getInt8Ty());
    return b_.CreateBitCast(x, reg_type(e.dtype));
  }
  switch (e.op) {
    case Intrinsic::k_isnan: return b_.CreateFCmpUNO(x, x);
    case Intrinsic::k_isinf: {
      llvm::Value* ax = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
      return b_.CreateFCmpOEQ(ax, llvm::ConstantFP::getInfinity(x->getType()));
    }
    case Intrinsic::k_sqrt: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
    case Intrinsic::k_rsqrt:
      return b_.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0),
                           b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
    case Intrinsic::k_fabs: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    case Intrinsic::k_floor: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
    case Intrinsic::k_ceil: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
    case Intrinsic::k_round: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);
    case Intrinsic::k_fmod: return b_.CreateFRem(x, emit(e.args[1]));
    default: break;
  }
  llvm::Function* f = math_function(e.op, t);
  if (intrinsic_arity(e.op) == 2) return b_.CreateCall(f, {x, emit(e.args[1])});
  return b_.CreateCall(f, {x});
}

}  // namespace tessel::codegen
