// Internal to the CUDA backend: flattened tensor IR printed as CUDA C
// statements and expressions (cuda_expr.cpp, cuda_stmt.cpp), with the
// semantics of ir/tensor/scalar_semantics.h through the prelude's helpers.
#pragma once

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "ir/tensor/function.h"
#include "ir/tensor/simplify.h"
#include "src/codegen/cuda/cuda_codegen.h"

namespace tessel::codegen::cuda_detail {

// C identifiers for a module's variables and buffers: the IR's names with
// other characters replaced, made unique by a suffix.
class CNames {
 public:
  std::string var(const tir::VarNode* v);
  std::string buffer(const tir::BufferNode* b);
  std::string fresh(const std::string& base);  // a new identifier, not tied to a node

 private:
  std::map<const void*, std::string> names_;
  std::set<std::string> used_;
};

// Claims the words generated code must not use for its own names: C++ and
// CUDA keywords and built-ins, the math functions, the prelude's and the
// host entries' identifiers.
void reserve_c_words(CNames& names);

// The type an expression of dtype t is computed in (16-bit floats: float),
// and the type its elements are stored as in a buffer (their bits; bool: a byte).
std::string c_type(DType t);
std::string c_storage_type(DType t);
int64_t c_storage_bytes(DType t);  // of one element in a buffer

// A C string literal of text.
std::string c_string_literal(const std::string& text);

class CudaPrinter {
 public:
  CudaPrinter(CNames& names, std::vector<CudaAssert>& asserts) : names_(names), asserts_(asserts) {}

  // Where a shared buffer starts in the block's arena (cuda_codegen.cpp lays them out).
  void set_shared_offset(const tir::BufferNode* buffer, int64_t offset) { shared_offsets_[buffer] = offset; }
  // The threads of the launch's block (a global buffer allocated outside its thread loops is one per block).
  void set_threads_per_block(int64_t threads) { threads_per_block_ = threads; }
  // Where a cross-thread reduction's scratch starts in the arena (cuda_reduction.h).
  void set_reduction_scratch(const tir::ForNode* loop, int64_t offset) { reduction_scratch_[loop] = offset; }

  std::string expr(const tir::Expr& e);
  void stmt(const tir::Stmt& s, int indent, std::ostream& os);

 private:
  std::string binary(const tir::ExprNode& e);
  std::string int_binary(const tir::ExprNode& e, const std::string& a, const std::string& b);
  std::string u64_binary(const tir::ExprNode& e, const std::string& a, const std::string& b);
  // Whether a floor division or modulo of e is C's: a positive constant divisor, a dividend never negative.
  bool is_plain_division(const tir::ExprNode& e) const;
  std::string float_binary(const tir::ExprNode& e, const std::string& a, const std::string& b);
  std::string cast(DType to, DType from, const std::string& value);
  std::string call(const tir::CallNode& e);
  std::string load(const tir::LoadNode& e);
  std::string offset(const tir::BufferNode& buffer, const std::vector<tir::Expr>& indices);
  // The element offset of buffer[indices] through its strides, unsimplified.
  static tir::Expr linear_offset(const tir::BufferNode& buffer, const std::vector<tir::Expr>& indices);

  void loop(const tir::ForNode& loop, int indent, std::ostream& os);
  // A vectorized loop that copies 2 or 4 contiguous, aligned floats between
  // global or shared buffers, printed as one vector load and store
  // (cuda_vector.cpp); false, printing nothing, for any other loop.
  bool vector_copy(const tir::ForNode& loop, int indent, std::ostream& os);
  void reduction(const tir::ForNode& loop, int64_t scratch_offset, int indent, std::ostream& os);
  void store(const tir::StoreNode& s, int indent, std::ostream& os);
  void allocate(const tir::AllocateNode& a, int indent, std::ostream& os);
  void assertion(const tir::AssertNode& a, int indent, std::ostream& os);

  CNames& names_;
  std::vector<CudaAssert>& asserts_;  // numbered in order: a kernel reports a failed one by number
  std::map<const tir::BufferNode*, int64_t> shared_offsets_;
  std::map<const tir::ForNode*, int64_t> reduction_scratch_;
  // The store of the cross-thread reduction being printed, which updates this register instead.
  const tir::StoreNode* reducing_store_ = nullptr;
  std::string reducing_acc_;
  tir::Expr reducing_operand_;
  tir::Analyzer ranges_;  // every loop variable printed so far, bound to its range
  int64_t threads_per_block_ = 1;
  int thread_loops_ = 0;  // threadIdx loops around the statement being printed
};

}  // namespace tessel::codegen::cuda_detail
