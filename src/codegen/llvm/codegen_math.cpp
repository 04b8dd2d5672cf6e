// The math intrinsics of the tensor IR. exp, log, tanh, erf and sigmoid on f32
// are built here from IR arithmetic (Cephes' range reductions and
// polynomials, a rational erf): small always-inline functions that the loop
// vectorizer widens like any other code, instead of one libm call per lane.
// The rest (and every f64 function) call the C math library.
#include <llvm/IR/Intrinsics.h>

#include <initializer_list>

#include "ir/core/diagnostics.h"
#include "src/codegen/llvm/codegen_llvm.h"

namespace tessel::codegen {

using namespace tir;

namespace {

using Builder = llvm::IRBuilder<>;

llvm::Value* fconst(Builder& b, double v) {
  return llvm::ConstantFP::get(b.getFloatTy(), v);
}

// Horner's rule, coefficients from the highest degree down.
llvm::Value* polynomial(Builder& b, llvm::Value* x, std::initializer_list<double> coefficients) {
  llvm::Value* acc = nullptr;
  for (double c : coefficients) acc = acc ? b.CreateFAdd(b.CreateFMul(acc, x), fconst(b, c)) : fconst(b, c);
  return acc;
}

llvm::Value* select_nan(Builder& b, llvm::Value* x, llvm::Value* r) {
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, r);
}

// Clamps without minnum/maxnum's NaN rules (extra instructions on x86): a
// NaN input is restored by select_nan at the end of each function.
llvm::Value* clamp(Builder& b, llvm::Value* x, double lo, double hi) {
  llvm::Value* c_hi = fconst(b, hi);
  llvm::Value* c_lo = fconst(b, lo);
  llvm::Value* below_hi = b.CreateSelect(b.CreateFCmpOLT(x, c_hi), x, c_hi);
  return b.CreateSelect(b.CreateFCmpOGT(below_hi, c_lo), below_hi, c_lo);
}

// Adding 1.5 * 2^23 rounds a float of magnitude under 2^22 to an integer
// (to nearest) and leaves that integer in the low mantissa bits.
constexpr double kRoundingBias = 12582912.0;

// round(x / ln 2) as n, through x / ln 2 + bias (`biased`, whose low
// mantissa bits hold n plus whatever integer the bias carries), and the
// reduced argument r = x - n ln 2 in [-ln 2 / 2, ln 2 / 2] (ln 2 split in two
// so that n ln 2 is exact).
struct ReducedExp {
  llvm::Value* biased;
  llvm::Value* r;
};

ReducedExp reduce_exp_argument(Builder& b, llvm::Value* x, double bias) {
  llvm::Value* biased = b.CreateFAdd(b.CreateFMul(x, fconst(b, 1.44269504088896341)), fconst(b, bias));
  llvm::Value* n = b.CreateFSub(biased, fconst(b, bias));
  llvm::Value* r = b.CreateFSub(x, b.CreateFMul(n, fconst(b, 0.693359375)));
  r = b.CreateFSub(r, b.CreateFMul(n, fconst(b, -2.12194440e-4)));
  return {biased, r};
}

// e^r for r in [-ln 2 / 2, ln 2 / 2] (Cephes' polynomial).
llvm::Value* exp_of_reduced(Builder& b, llvm::Value* r) {
  llvm::Value* p = polynomial(
      b, r,
      {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1});
  return b.CreateFAdd(b.CreateFAdd(b.CreateFMul(p, b.CreateFMul(r, r)), r), fconst(b, 1.0));
}

// 1 / x for an x that is never infinite, allowed to be the reciprocal
// estimate refined by a Newton step where the target has one (see
// set_target_attributes).
llvm::Value* reciprocal(Builder& b, llvm::Value* x) {
  auto* div = llvm::cast<llvm::Instruction>(b.CreateFDiv(fconst(b, 1.0), x));
  div->setHasAllowReciprocal(true);
  div->setHasNoInfs(true);  // LLVM estimates only divisions without infinities
  return div;
}

llvm::Value* power_of_two(Builder& b, llvm::Value* e) {
  return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, b.getInt32(127)), 23), b.getFloatTy());
}

llvm::Value* build_exp(Builder& b, llvm::Value* x) {
  ReducedExp red = reduce_exp_argument(b, clamp(b, x, -104.0, 88.8), kRoundingBias);
  llvm::Value* y = exp_of_reduced(b, red.r);
  // 2^n for n in [-150, 128] as two factors, so that neither overflows nor
  // underflows on its own (the results below 2^-126 are subnormal).
  llvm::Value* n_int = b.CreateSub(b.CreateBitCast(red.biased, b.getInt32Ty()),
                                   b.CreateBitCast(fconst(b, kRoundingBias), b.getInt32Ty()));
  llvm::Value* half = b.CreateAShr(n_int, 1);
  llvm::Value* result =
      b.CreateFMul(b.CreateFMul(y, power_of_two(b, half)), power_of_two(b, b.CreateSub(n_int, half)));
  result = b.CreateSelect(b.CreateFCmpOGT(x, fconst(b, 88.72283935546875)),
                          llvm::ConstantFP::getInfinity(b.getFloatTy()), result);
  result = b.CreateSelect(b.CreateFCmpOLT(x, fconst(b, -103.972084)), fconst(b, 0.0), result);
  return select_nan(b, x, result);
}

llvm::Value* build_log(Builder& b, llvm::Value* x) {
  llvm::Type* i32 = b.getInt32Ty();
  // Subnormal inputs are scaled into the normal range first.
  llvm::Value* subnormal = b.CreateFCmpOLT(x, fconst(b, 1.17549435e-38));
  llvm::Value* xs = b.CreateSelect(subnormal, b.CreateFMul(x, fconst(b, 8388608.0)), x);
  llvm::Value* bits = b.CreateBitCast(xs, i32);
  llvm::Value* e = b.CreateSub(b.CreateLShr(bits, 23), b.getInt32(126));
  e = b.CreateSelect(subnormal, b.CreateSub(e, b.getInt32(23)), e);
  llvm::Value* m =
      b.CreateBitCast(b.CreateOr(b.CreateAnd(bits, b.getInt32(0x007fffff)), b.getInt32(0x3f000000)),
                      b.getFloatTy());  // in [0.5, 1)
  llvm::Value* below = b.CreateFCmpOLT(m, fconst(b, 0.707106781186547524));
  llvm::Value* ef = b.CreateSIToFP(b.CreateSub(e, b.CreateZExt(below, i32)), b.getFloatTy());
  m = b.CreateFSub(b.CreateSelect(below, b.CreateFAdd(m, m), m), fconst(b, 1.0));
  llvm::Value* z = b.CreateFMul(m, m);
  llvm::Value* p =
      polynomial(b, m,
                 {7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
                  -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1});
  llvm::Value* y = b.CreateFMul(b.CreateFMul(p, m), z);
  y = b.CreateFAdd(y, b.CreateFMul(ef, fconst(b, -2.12194440e-4)));
  y = b.CreateFSub(y, b.CreateFMul(z, fconst(b, 0.5)));
  llvm::Value* result = b.CreateFAdd(b.CreateFAdd(m, y), b.CreateFMul(ef, fconst(b, 0.693359375)));
  llvm::Type* f = b.getFloatTy();
  result = b.CreateSelect(b.CreateFCmpOEQ(x, fconst(b, 0.0)), llvm::ConstantFP::getInfinity(f, true), result);
  result = b.CreateSelect(b.CreateFCmpOLT(x, fconst(b, 0.0)), llvm::ConstantFP::getNaN(f), result);
  result = b.CreateSelect(b.CreateFCmpOEQ(x, llvm::ConstantFP::getInfinity(f)), x, result);
  return select_nan(b, x, result);
}

llvm::Value* build_tanh(Builder& b, llvm::Value* x) {
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* z = b.CreateFMul(x, x);
  llvm::Value* p = polynomial(
      b, z, {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2, 1.33314422036E-1, -3.33332819422E-1});
  llvm::Value* small = b.CreateFAdd(b.CreateFMul(b.CreateFMul(p, z), x), x);
  // 1 - 2 / (e^(2|x|) + 1), with the sign of x; past |x| = 9 that is 1 in
  // float, and the clamp keeps the divisor finite.
  llvm::Value* e2 = build_exp(b, b.CreateFMul(clamp(b, ax, 0.0, 9.0), fconst(b, 2.0)));
  llvm::Value* big = b.CreateFSub(fconst(b, 1.0),
                                  b.CreateFMul(fconst(b, 2.0), reciprocal(b, b.CreateFAdd(e2, fconst(b, 1.0)))));
  big = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, big, x);
  return select_nan(b, x, b.CreateSelect(b.CreateFCmpOLT(ax, fconst(b, 0.625)), small, big));
}

llvm::Value* build_erf(Builder& b, llvm::Value* x) {
  llvm::Value* xc = clamp(b, x, -4.0, 4.0);
  llvm::Value* x2 = b.CreateFMul(xc, xc);
  llvm::Value* p =
      polynomial(b, x2,
                 {-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
                  -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02});
  llvm::Value* q = polynomial(b, x2,
                              {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                               -7.37332916720468e-03, -1.42647390514189e-02});
  llvm::Value* r = b.CreateFMul(b.CreateFMul(xc, p), reciprocal(b, q));  // q < 0 on [-4, 4]
  // The rational form drifts just past 1 near the clamp.
  r = clamp(b, r, -1.0, 1.0);
  return select_nan(b, x, r);
}

// 1 / (1 + e^-x) from e = e^z, z = -|x| in [-87, 0]: f = e / (1 + e) is
// sigmoid(-|x|), and sigmoid(x) = 1 - f for positive x. On that range one
// factor 2^n suffices, and its bits come out of the rounding bias itself
// (the bias carries the exponent's 127); e^t on the reduced argument is a
// degree-5 minimax fit whose last step also applies 2^n. Below -87, f stays
// e^-87 (1.6e-38) instead of going subnormal. A NaN passes through the clamp
// and every step after it.
llvm::Value* build_sigmoid(Builder& b, llvm::Value* x) {
  llvm::Value* minus_ax = b.CreateFNeg(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x));
  llvm::Value* lo = fconst(b, -87.0);
  llvm::Value* z = b.CreateSelect(b.CreateFCmpOLT(minus_ax, lo), lo, minus_ax);
  ReducedExp red = reduce_exp_argument(b, z, kRoundingBias + 127.0);
  llvm::Value* scale = b.CreateBitCast(b.CreateShl(b.CreateBitCast(red.biased, b.getInt32Ty()), 23), b.getFloatTy());
  llvm::Value* t = red.r;
  llvm::Value* p = polynomial(b, t, {8.290315046906471e-3, 4.189793020486832e-2, 1.666763573884964e-1,
                                     4.999915063381195e-1, 9.999997019767761e-1});
  llvm::Value* e = b.CreateFAdd(b.CreateFMul(b.CreateFMul(t, scale), p), scale);  // 2^n (1 + t p(t))
  llvm::Value* f = b.CreateFMul(e, reciprocal(b, b.CreateFAdd(e, fconst(b, 1.0))));
  return b.CreateSelect(b.CreateFCmpOGT(x, fconst(b, 0.0)), b.CreateFSub(fconst(b, 1.0), f), f);
}

// The C library's name of an intrinsic, for float or double.
std::string libm_name(Intrinsic op, bool is_double) {
  std::string name(intrinsic_name(op));
  return is_double ? name : name + "f";
}

}  // namespace

llvm::Function* CodegenLLVM::math_function(Intrinsic op, DType t) {
  bool is_double = t == DType::kF64;
  int key = int(op) * 2 + (is_double ? 1 : 0);
  if (auto it = math_cache_.find(key); it != math_cache_.end()) return it->second;
  llvm::Type* ty = is_double ? b_.getDoubleTy() : b_.getFloatTy();
  int arity = intrinsic_arity(op);
  std::vector<llvm::Type*> params(size_t(arity), ty);
  auto* fn_type = llvm::FunctionType::get(ty, params, false);
  bool built_here =
      !is_double && (op == Intrinsic::k_exp || op == Intrinsic::k_log || op == Intrinsic::k_tanh ||
                     op == Intrinsic::k_erf || op == Intrinsic::k_sigmoid);
  llvm::Function* f;
  if (!built_here && !(is_double && op == Intrinsic::k_sigmoid)) {
    f = llvm::cast<llvm::Function>(
        module_.getOrInsertFunction(libm_name(op, is_double), fn_type).getCallee());
    f->setDoesNotThrow();
    f->setWillReturn();
    f->setDoesNotAccessMemory();  // errno is never read
  } else {
    f = llvm::Function::Create(fn_type, llvm::Function::InternalLinkage,
                               "tessel." + std::string(intrinsic_name(op)) + (is_double ? ".f64" : ".f32"),
                               module_);
    f->addFnAttr(llvm::Attribute::AlwaysInline);
    f->setDoesNotThrow();
    f->setDoesNotAccessMemory();
    set_target_attributes(*f, options_.target);
    Builder fb(llvm::BasicBlock::Create(ctx_, "entry", f));
    llvm::FastMathFlags contract;  // the polynomials' a * x + c as fused multiply-adds
    contract.setAllowContract();
    fb.setFastMathFlags(contract);
    llvm::Value* x = f->getArg(0);
    llvm::Value* r = nullptr;
    switch (op) {
      case Intrinsic::k_exp: r = build_exp(fb, x); break;
      case Intrinsic::k_log: r = build_log(fb, x); break;
      case Intrinsic::k_tanh: r = build_tanh(fb, x); break;
      case Intrinsic::k_erf: r = build_erf(fb, x); break;
      case Intrinsic::k_sigmoid:
        if (is_double) {
          llvm::Function* exp = math_function(Intrinsic::k_exp, DType::kF64);
          llvm::Value* one = llvm::ConstantFP::get(ty, 1.0);
          r = fb.CreateFDiv(one, fb.CreateFAdd(one, fb.CreateCall(exp, {fb.CreateFNeg(x)})));
        } else {
          r = build_sigmoid(fb, x);
        }
        break;
      default: TESSEL_ICHECK(false) << "no built-in " << intrinsic_name(op);
    }
    fb.CreateRet(r);
  }
  math_cache_[key] = f;
  return f;
}

}  // namespace tessel::codegen
