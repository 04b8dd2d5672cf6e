// Internal to the CPU backend: the emitter of one flattened PrimFunc into an
// LLVM function. Values in registers: integers at their width (u8 as i8 with
// unsigned operations), bool as i1, f32/f16/bf16 as float (16-bit types are
// rounded when stored or cast, as the interpreter does), f64 as double.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/tensor/function.h"
#include "ir/tensor/functor.h"
#include "ir/tensor/simplify.h"
#include "src/codegen/llvm/llvm_module.h"

namespace tessel::codegen {

// The symbols an emitted statement sees: loop variables and buffer bases.
struct Scope {
  std::unordered_map<const tir::VarNode*, llvm::Value*> vars;
  std::unordered_map<const tir::BufferNode*, llvm::Value*> buffers;
};

class CodegenLLVM {
 public:
  // vector_bits: the width of the target's vector registers (vector_register_bits).
  CodegenLLVM(llvm::Module& module, const CodegenOptions& options, int vector_bits);
  // Emits `int32_t symbol(void* const* args)` for func.
  void emit_kernel(const std::string& symbol, const tir::PrimFunc& func);

  // ---- expressions (codegen_expr.cpp)
  llvm::Value* emit(const tir::Expr& e);
  llvm::Type* reg_type(DType t);  // the type a value of t has in registers
  llvm::Type* mem_type(DType t);  // the type an element of t has in memory

 private:
  llvm::Value* emit_binary(const tir::ExprNode& e);
  llvm::Value* emit_int_division(tir::ExprKind kind, DType t, llvm::Value* a, llvm::Value* b);
  llvm::Value* emit_shift(tir::ExprKind kind, DType t, llvm::Value* a, llvm::Value* b);
  llvm::Value* emit_float_binary(tir::ExprKind kind, llvm::Value* a, llvm::Value* b);
  llvm::Value* emit_logical(const tir::ExprNode& e);
  llvm::Value* emit_select(const tir::SelectNode& e);
  // Whether evaluating e may read memory out of bounds: a load whose indices
  // the enclosing loops' ranges do not keep inside its buffer. Those loads
  // stay behind their guard's branch; the others may be speculated, which
  // keeps a guarded read (a clamped padding read) branch-free and vectorizable.
  bool has_unsafe_load(const tir::Expr& e) const;
  llvm::Value* emit_cast(DType to, DType from, llvm::Value* v);
  llvm::Value* emit_small_cast(DType to, DType from, llvm::Value* v);
  llvm::Value* emit_load(const tir::LoadNode& e);
  llvm::Value* emit_call(const tir::CallNode& e);
  llvm::Value* element_pointer(const tir::BufferNode& buffer, const std::vector<tir::Expr>& indices);
  llvm::Value* view_offset(const tir::BufferNode& buffer, const std::vector<tir::Expr>& indices);
  llvm::Value* round_to_storage(DType t, llvm::Value* v);  // f16/bf16 precision, in float
  llvm::Value* to_memory(DType t, llvm::Value* v);
  llvm::Value* from_memory(DType t, llvm::Value* v);
  // Emits then_value / else_value on their own branches and joins them.
  llvm::Value* emit_branches(llvm::Value* cond, const std::function<llvm::Value*()>& then_value,
                             const std::function<llvm::Value*()>& else_value);
  llvm::Function* math_function(tir::Intrinsic op, DType t);  // codegen_math.cpp
  void tag_access(llvm::Instruction* inst, const tir::BufferNode& buffer);

  // ---- statements (codegen_stmt.cpp)
  void emit(const tir::Stmt& s);
  void emit_for(const tir::ForNode& loop);
  static bool vectorizes_inside(const tir::ForNode& loop);
  static bool reads_at_a_stride(const tir::ForNode& loop);
  // The element offset of buffer[indices], sum of index times stride.
  static tir::Expr flat_offset(const tir::BufferNode& buffer, const std::vector<tir::Expr>& indices);
  // whole_vectors: the loop's iterations are whole vectors (the head of a
  // masked-tail loop, a copy), vectorized without interleaving, so that no
  // scalar remainder is left. one_vector_copy: the loop is one of the
  // one-vector copies of a longer one (emit_vector_copies).
  llvm::MDNode* vector_loop_hints(const tir::ForNode& loop, llvm::MDNode* group, bool whole_vectors,
                                  bool one_vector_copy = false);
  llvm::MDNode* no_vectorize_hint();
  void emit_serial_loop(const tir::ForNode& loop, llvm::MDNode* loop_metadata);
  void emit_vector_loop(const tir::ForNode& loop, bool whole_vectors);
  void emit_vector_copies(const tir::ForNode& loop, int64_t vectors);
  std::set<const tir::ForNode*> vector_loops_to_copy(const tir::Stmt& root) const;
  int64_t whole_vectors_before_masked_tail(const tir::ForNode& loop) const;
  void emit_with_masked_tail(const tir::ForNode& loop, int64_t whole);
  void emit_loop(const std::string& name, llvm::Value* begin, llvm::Value* end, llvm::MDNode* loop_metadata,
                 const std::function<void(llvm::Value*)>& body);
  void emit_unrolled(const tir::ForNode& loop, int64_t extent);
  void emit_store(const tir::StoreNode& store);
  void emit_allocate(const tir::AllocateNode& alloc);
  void emit_if(const tir::IfThenElseNode& node);
  void emit_assert(const tir::AssertNode& node);
  void emit_prefetch(const tir::PrefetchNode& node);
  // The current function's failure exit: frees its live heap allocations,
  // then the kernel reports the error slot (tessel_rt_kernel_error) and
  // returns 1; a parallel body just returns (its caller checks the slot).
  void emit_failure_exit();
  // The kernel's error slot {i32 failed, ptr message, i32 count, [N x i64]
  // values}: in the kernel a stack slot cleared at entry, in a parallel body
  // the pointer its closure carries.
  llvm::Value* error_slot();
  llvm::StructType* error_slot_type();
  llvm::AllocaInst* entry_alloca(llvm::Type* type, llvm::Value* count, uint64_t align);

  // ---- parallel loops (codegen_parallel.cpp)
  void emit_parallel(const tir::ForNode& loop);

  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  const CodegenOptions& options_;
  llvm::IRBuilder<> b_;
  llvm::Function* function_ = nullptr;  // the function being emitted (kernel or outlined body)
  bool in_kernel_entry_ = false;        // false inside an outlined parallel body
  int parallel_depth_ = 0;
  int outlined_count_ = 0;
  std::string kernel_symbol_;
  Scope scope_;
  int vector_bits_;
  int64_t f32_lanes() const { return vector_bits_ / 32; }  // of one vector register
  std::set<const tir::ForNode*> copied_vector_loops_;  // of the kernel being emitted
  tir::Analyzer loop_ranges_;  // every loop variable seen so far, bound to its range
  // Vectorized loops being emitted, innermost last: the access group that
  // marks their memory accesses as free of loop-carried dependences.
  std::vector<llvm::MDNode*> access_groups_;
  // Buffers allocated inside the innermost vectorized loop: their accesses
  // carry dependences through the reused storage, so they stay unmarked.
  std::vector<std::unordered_set<const tir::BufferNode*>> loop_local_buffers_;
  std::unordered_map<int, llvm::Function*> math_cache_;
  llvm::Value* error_slot_ = nullptr;    // of function_, once needed
  std::vector<llvm::Value*> live_heap_;  // scratch allocations of function_ open at the insertion point
};

// The name and features of a target as LLVM function attributes.
void set_target_attributes(llvm::Function& f, const CpuTarget& target);

}  // namespace tessel::codegen
