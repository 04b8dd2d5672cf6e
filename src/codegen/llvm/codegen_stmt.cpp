// Statements of a flattened PrimFunc as LLVM control flow: the kernel entry,
// loops of every kind, stores, allocations, ifs and asserts.
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include <algorithm>

#include "ir/core/diagnostics.h"
#include "ir/tensor/simplify.h"
#include "src/codegen/llvm/codegen_llvm.h"

namespace tessel::codegen {

using namespace tir;

namespace {

// The most copies an unrolled loop is emitted as; longer ones are left to LLVM's unroller.
constexpr int64_t kMaxUnrolledCopies = 64;

}  // namespace

void set_target_attributes(llvm::Function& f, const CpuTarget& target) {
  f.addFnAttr("target-cpu", target.cpu);
  std::string features;
  for (const std::string& feature : target.features) features += (features.empty() ? "" : ",") + feature;
  f.addFnAttr("target-features", features);
  // LLVM prefers 256-bit vectors on some AVX-512 CPUs (frequency drops on old
  // Intel parts); the kernels here are long loops where the full width wins.
  if (std::find(target.features.begin(), target.features.end(), "+avx512f") != target.features.end())
    f.addFnAttr("prefer-vector-width", "512");
  // A division marked `arcp` (the built-in math functions mark theirs) may
  // become the vector reciprocal estimate plus one Newton step, about one ulp
  // from the quotient: a vector division is many times slower.
  f.addFnAttr("reciprocal-estimates", "vec-divf:1");
}

CodegenLLVM::CodegenLLVM(llvm::Module& module, const CodegenOptions& options, int vector_bits)
    : module_(module), ctx_(module.getContext()), options_(options), b_(module.getContext()),
      vector_bits_(vector_bits) {}

// int32_t symbol(void* const* args): the parameters are loaded from args and
// marked noalias (the execution plan never hands one buffer to two parameters
// of a kernel) and 64-byte aligned.
void CodegenLLVM::emit_kernel(const std::string& symbol, const PrimFunc& func) {
  auto* type = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy()}, false);
  function_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, symbol, module_);
  function_->setVisibility(llvm::GlobalValue::HiddenVisibility);
  function_->setDoesNotThrow();
  set_target_attributes(*function_, options_.target);
  kernel_symbol_ = symbol;
  in_kernel_entry_ = true;
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", function_));
  scope_ = Scope{};
  error_slot_ = nullptr;
  live_heap_.clear();
  std::vector<Buffer> params = func->params();
  llvm::Value* args = function_->getArg(0);
  llvm::MDNode* nonnull_align =
      llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(b_.getInt64(uint64_t(kBufferAlignment)))});
  for (size_t i = 0; i < params.size(); ++i) {
    llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), args, i);
    llvm::LoadInst* base = b_.CreateLoad(b_.getPtrTy(), slot, params[i]->name);
    base->setMetadata(llvm::LLVMContext::MD_align, nonnull_align);
    scope_.buffers[params[i].get()] = base;
  }
  // The body lives in its own always-inline function whose parameters carry
  // noalias: inlining turns that into alias scopes the optimiser uses.
  std::vector<llvm::Type*> param_types(params.size(), b_.getPtrTy());
  auto* body_type = llvm::FunctionType::get(b_.getInt32Ty(), param_types, false);
  llvm::Function* body =
      llvm::Function::Create(body_type, llvm::Function::InternalLinkage, symbol + ".body", module_);
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  body->setDoesNotThrow();
  set_target_attributes(*body, options_.target);
  std::vector<llvm::Value*> call_args;
  for (size_t i = 0; i < params.size(); ++i) {
    body->addParamAttr(unsigned(i), llvm::Attribute::NoAlias);
    body->addParamAttr(unsigned(i), llvm::Attribute::getWithAlignment(ctx_, llvm::Align(kBufferAlignment)));
    call_args.push_back(scope_.buffers[params[i].get()]);
  }
  b_.CreateRet(b_.CreateCall(body, call_args));

  function_ = body;
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", body));
  for (size_t i = 0; i < params.size(); ++i) scope_.buffers[params[i].get()] = body->getArg(unsigned(i));
  const Stmt& root = func->body;
  TESSEL_ICHECK(root->kind != StmtKind::kBlock) << "emit_kernel needs a flattened function (flatten_blocks)";
  copied_vector_loops_ = vector_loops_to_copy(root);
  emit(root);
  b_.CreateRet(b_.getInt32(0));
}

void CodegenLLVM::emit(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::kFor: return emit_for(static_cast<const ForNode&>(*s));
    case StmtKind::kStore: return emit_store(static_cast<const StoreNode&>(*s));
    case StmtKind::kAllocate: return emit_allocate(static_cast<const AllocateNode&>(*s));
    case StmtKind::kIfThenElse: return emit_if(static_cast<const IfThenElseNode&>(*s));
    case StmtKind::kSeq:
      for (const Stmt& sub : static_cast<const SeqNode&>(*s).stmts) emit(sub);
      return;
    case StmtKind::kBarrier:
      TESSEL_USER_CHECK(false, Span{}) << "a barrier in a CPU kernel: the function was scheduled for a GPU";
      return;
    case StmtKind::kBlock: TESSEL_ICHECK(false) << "a block reached the LLVM backend (flatten_blocks first)";
      return;
    case StmtKind::kAssert: return emit_assert(static_cast<const AssertNode&>(*s));
    case StmtKind::kPrefetch: return emit_prefetch(static_cast<const PrefetchNode&>(*s));
  }
}

void CodegenLLVM::emit_for(const ForNode& loop) {
  loop_ranges_.bind(loop.var, Range{loop.min, loop.extent});
  switch (loop.for_kind) {
    case ForKind::kSerial:
      return emit_serial_loop(loop, vectorizes_inside(loop) ? no_vectorize_hint() : nullptr);
    case ForKind::kThreadBound:
      TESSEL_USER_CHECK(false, Span{}) << "loop " << loop.var->name << " is bound to " << loop.thread_tag
                                       << ": GPU schedules do not compile for a CPU";
      return;
    case ForKind::kParallel:
      if (parallel_depth_ == 0) return emit_parallel(loop);
      return emit_serial_loop(loop, nullptr);  // nested parallelism runs serially in the pool
    case ForKind::kUnrolled: {
      const int64_t* extent = as_const_int(loop.extent);
      if (extent && *extent <= kMaxUnrolledCopies) return emit_unrolled(loop, *extent);
      llvm::MDNode* full = llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.full")});
      return emit_serial_loop(loop, full);
    }
    case ForKind::kVectorized: {
      if (int64_t whole = whole_vectors_before_masked_tail(loop)) return emit_with_masked_tail(loop, whole);
      return emit_vector_loop(loop, /*whole_vectors=*/false);
    }
  }
}

void CodegenLLVM::emit_vector_copies(const ForNode& loop, int64_t vectors) {
  int64_t lanes = f32_lanes();
  llvm::Value* begin = emit(loop.min);
  llvm::Type* ty = begin->getType();
  for (int64_t v = 0; v < vectors; ++v) {
    llvm::Value* base = b_.CreateAdd(begin, llvm::ConstantInt::get(ty, uint64_t(v * lanes)));
    llvm::MDNode* group = llvm::MDNode::getDistinct(ctx_, {});
    llvm::MDNode* hints = vector_loop_hints(loop, group, /*whole_vectors=*/true, /*one_vector_copy=*/true);
    access_groups_.push_back(group);
    loop_local_buffers_.emplace_back();
    emit_loop(loop.var->name, llvm::ConstantInt::get(ty, 0), llvm::ConstantInt::get(ty, uint64_t(lanes)),
              hints, [&](llvm::Value* iv) {
                scope_.vars[loop.var.get()] = b_.CreateAdd(base, iv, "", /*HasNUW=*/true, /*HasNSW=*/true);
                emit(loop.body);
              });
    access_groups_.pop_back();
    loop_local_buffers_.pop_back();
  }
  scope_.vars.erase(loop.var.get());
}

void CodegenLLVM::emit_vector_loop(const ForNode& loop, bool whole_vectors) {
  if (copied_vector_loops_.count(&loop))
    return emit_vector_copies(loop, *as_const_int(loop.extent) / f32_lanes());
  llvm::MDNode* group = llvm::MDNode::getDistinct(ctx_, {});
  llvm::MDNode* hints = vector_loop_hints(loop, group, whole_vectors);
  access_groups_.push_back(group);
  loop_local_buffers_.emplace_back();
  emit_serial_loop(loop, hints);
  access_groups_.pop_back();
  loop_local_buffers_.pop_back();
}

// The iterations of a masked-tail loop (tir::kMaskedTail) in whole f32
// vectors, where there are some before the tail; else 0. LLVM folds a tail
// into masks on every vector of the loop, and a masked store is slow on x86
// (a row of 111 spent most of its time in them): the whole vectors run as a
// loop of their own, and only the last, partial vector is masked.
int64_t CodegenLLVM::whole_vectors_before_masked_tail(const ForNode& loop) const {
  const int64_t* extent = as_const_int(loop.extent);
  int64_t lanes = f32_lanes();
  if (!loop.annotations.count(kMaskedTail) || !extent || lanes <= 1 || *extent <= lanes ||
      *extent % lanes == 0)
    return 0;
  return *extent - *extent % lanes;
}

void CodegenLLVM::emit_with_masked_tail(const ForNode& loop, int64_t whole) {
  Annotations unmasked = loop.annotations;
  unmasked.erase(kMaskedTail);
  const int64_t* extent = as_const_int(loop.extent);
  Stmt head = make_for(loop.var, loop.min, int_imm(whole), ForKind::kVectorized, loop.body, {}, unmasked);
  Stmt tail = make_for(loop.var, simplify(loop.min + int_imm(whole)), int_imm(*extent - whole),
                       ForKind::kVectorized, loop.body, {}, loop.annotations);
  const auto& head_loop = static_cast<const ForNode&>(*head);
  loop_ranges_.bind(head_loop.var, Range{head_loop.min, head_loop.extent});
  emit_vector_loop(head_loop, /*whole_vectors=*/true);
  emit_for(static_cast<const ForNode&>(*tail));
}

void CodegenLLVM::emit_serial_loop(const ForNode& loop, llvm::MDNode* loop_metadata) {
  llvm::Value* begin = emit(loop.min);
  llvm::Value* end = b_.CreateAdd(begin, emit(loop.extent));
  emit_loop(loop.var->name, begin, end, loop_metadata, [&](llvm::Value* iv) {
    scope_.vars[loop.var.get()] = iv;
    emit(loop.body);
  });
  scope_.vars.erase(loop.var.get());
}

// for (iv = begin; iv < end; ++iv) body(iv), with `loop_metadata` (a list of
// hint nodes, or null) on the back edge.
void CodegenLLVM::emit_loop(const std::string& name, llvm::Value* begin, llvm::Value* end,
                            llvm::MDNode* loop_metadata, const std::function<void(llvm::Value*)>& body) {
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, name + ".header", function_);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx_, name + ".body", function_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, name + ".exit", function_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* iv = b_.CreatePHI(begin->getType(), 2, name);
  iv->addIncoming(begin, preheader);
  b_.CreateCondBr(b_.CreateICmpSLT(iv, end), body_bb, exit);
  b_.SetInsertPoint(body_bb);
  body(iv);
  llvm::Value* next = b_.CreateAdd(iv, llvm::ConstantInt::get(begin->getType(), 1), "", /*HasNUW=*/true,
                                   /*HasNSW=*/true);
  llvm::BranchInst* back = b_.CreateBr(header);
  iv->addIncoming(next, b_.GetInsertBlock());
  if (loop_metadata) {
    std::vector<llvm::Metadata*> md{nullptr};
    for (const llvm::MDOperand& op : loop_metadata->operands()) md.push_back(op.get());
    llvm::MDNode* id = llvm::MDNode::getDistinct(ctx_, md);
    id->replaceOperandWith(0, id);
    back->setMetadata(llvm::LLVMContext::MD_loop, id);
  }
  b_.SetInsertPoint(exit);
}

void CodegenLLVM::emit_unrolled(const ForNode& loop, int64_t extent) {
  llvm::Value* begin = emit(loop.min);
  llvm::Type* ty = reg_type(loop.var->dtype);
  for (int64_t i = 0; i < extent; ++i) {
    scope_.vars[loop.var.get()] = b_.CreateAdd(begin, llvm::ConstantInt::get(ty, uint64_t(i)));
    emit(loop.body);
  }
  scope_.vars.erase(loop.var.get());
}

void CodegenLLVM::emit_store(const StoreNode& store) {
  llvm::Value* value = to_memory(store.buffer->dtype, emit(store.value));
  llvm::StoreInst* inst = b_.CreateStore(value, element_pointer(*store.buffer, store.indices));
  inst->setAlignment(llvm::Align(dtype_size(store.buffer->dtype)));
  tag_access(inst, *store.buffer);
}

// One prefetch into L2 (x86 prefetcht1) per cache line. The address is plain
// arithmetic (no inbounds GEP): a hint may point past the buffer, and a
// prefetch of any address neither faults nor reads into the program.
void CodegenLLVM::emit_prefetch(const PrefetchNode& prefetch) {
  auto it = scope_.buffers.find(prefetch.buffer.get());
  TESSEL_ICHECK(it != scope_.buffers.end())
      << "buffer " << prefetch.buffer->name << " prefetched outside its allocation";
  llvm::Value* offset = b_.CreateSExtOrTrunc(emit(prefetch.offset), b_.getInt64Ty());
  llvm::Value* first = b_.CreateGEP(mem_type(prefetch.buffer->dtype), it->second, offset);
  llvm::Function* intrinsic =
      llvm::Intrinsic::getDeclaration(&module_, llvm::Intrinsic::prefetch, {first->getType()});
  for (int64_t line = 0; line < prefetch.lines; ++line) {
    llvm::Value* address = b_.CreateGEP(b_.getInt8Ty(), first, b_.getInt64(line * PrefetchNode::kLineBytes));
    b_.CreateCall(intrinsic, {address, b_.getInt32(0), b_.getInt32(2), b_.getInt32(1)});
  }
}

llvm::AllocaInst* CodegenLLVM::entry_alloca(llvm::Type* type, llvm::Value* count, uint64_t align) {
  llvm::IRBuilder<> entry(&function_->getEntryBlock(), function_->getEntryBlock().begin());
  llvm::AllocaInst* a = entry.CreateAlloca(type, count);
  a->setAlignment(llvm::Align(align));
  return a;
}

// Small buffers are stack slots in the function's entry block (storage reused
// by every execution of the allocation); larger ones come from the runtime's
// scratch pool for the allocation's extent (tessel_rt_scratch_alloc). A failed
// allocation makes the kernel return TESSEL_ERR_OUT_OF_MEMORY (4); inside a
// parallel body, where no return is possible, it aborts.
void CodegenLLVM::emit_allocate(const AllocateNode& alloc) {
  const BufferNode& buffer = *alloc.buffer;
  int64_t bytes = buffer.storage_elements() * int64_t(dtype_size(buffer.dtype));
  if (!loop_local_buffers_.empty()) loop_local_buffers_.back().insert(&buffer);
  llvm::Type* elem = mem_type(buffer.dtype);
  if (bytes <= options_.max_stack_bytes) {
    scope_.buffers[&buffer] = entry_alloca(
        elem, b_.getInt64(uint64_t(std::max<int64_t>(buffer.storage_elements(), 1))), kBufferAlignment);
    emit(alloc.body);
    scope_.buffers.erase(&buffer);
    return;
  }
  llvm::FunctionCallee scratch_alloc =
      module_.getOrInsertFunction("tessel_rt_scratch_alloc", b_.getPtrTy(), b_.getInt64Ty());
  llvm::FunctionCallee scratch_free =
      module_.getOrInsertFunction("tessel_rt_scratch_free", b_.getVoidTy(), b_.getPtrTy());
  llvm::Value* ptr = b_.CreateCall(scratch_alloc, {b_.getInt64(uint64_t(bytes))});
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(ctx_, buffer.name + ".allocated", function_);
  llvm::BasicBlock* failed = llvm::BasicBlock::Create(ctx_, buffer.name + ".alloc_failed", function_);
  b_.CreateCondBr(b_.CreateIsNull(ptr), failed, ok);
  b_.SetInsertPoint(failed);
  if (in_kernel_entry_) {
    b_.CreateRet(b_.getInt32(4));
  } else {
    b_.CreateCall(module_.getOrInsertFunction("abort", b_.getVoidTy()));
    b_.CreateUnreachable();
  }
  b_.SetInsertPoint(ok);
  scope_.buffers[&buffer] = ptr;
  live_heap_.push_back(ptr);
  emit(alloc.body);
  live_heap_.pop_back();
  scope_.buffers.erase(&buffer);
  b_.CreateCall(scratch_free, {ptr});
}

void CodegenLLVM::emit_if(const IfThenElseNode& node) {
  llvm::Value* cond = emit(node.cond);
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", function_);
  llvm::BasicBlock* join_bb = llvm::BasicBlock::Create(ctx_, "if.end", function_);
  llvm::BasicBlock* else_bb =
      node.else_case.defined() ? llvm::BasicBlock::Create(ctx_, "if.else", function_) : join_bb;
  b_.CreateCondBr(cond, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  emit(node.then_case);
  b_.CreateBr(join_bb);
  if (node.else_case.defined()) {
    b_.SetInsertPoint(else_bb);
    emit(node.else_case);
    b_.CreateBr(join_bb);
  }
  b_.SetInsertPoint(join_bb);
}

llvm::StructType* CodegenLLVM::error_slot_type() {
  auto* values = llvm::ArrayType::get(b_.getInt64Ty(), AssertNode::kMaxAssertValues);
  return llvm::StructType::get(ctx_, {b_.getInt32Ty(), b_.getPtrTy(), b_.getInt32Ty(), values});
}

llvm::Value* CodegenLLVM::error_slot() {
  if (error_slot_) return error_slot_;
  TESSEL_ICHECK(in_kernel_entry_) << "a parallel body without its error slot";
  llvm::IRBuilder<> entry(&function_->getEntryBlock(), function_->getEntryBlock().begin());
  llvm::AllocaInst* slot = entry.CreateAlloca(error_slot_type());
  entry.CreateStore(entry.getInt32(0), entry.CreateStructGEP(error_slot_type(), slot, 0));
  error_slot_ = slot;
  return slot;
}

// if (!cond) { record message and values in the error slot (the first
// failure wins: threads of a parallel loop may fail together); exit }.
void CodegenLLVM::emit_assert(const AssertNode& node) {
  llvm::Value* cond = emit(node.cond);
  llvm::BasicBlock* fail_bb = llvm::BasicBlock::Create(ctx_, "assert.fail", function_);
  llvm::BasicBlock* record_bb = llvm::BasicBlock::Create(ctx_, "assert.record", function_);
  llvm::BasicBlock* exit_bb = llvm::BasicBlock::Create(ctx_, "assert.exit", function_);
  llvm::BasicBlock* ok_bb = llvm::BasicBlock::Create(ctx_, "assert.ok", function_);
  b_.CreateCondBr(cond, ok_bb, fail_bb, llvm::MDBuilder(ctx_).createBranchWeights(1u << 20, 1));
  b_.SetInsertPoint(fail_bb);
  std::vector<llvm::Value*> values;
  for (const Expr& v : node.values) {
    llvm::Value* x = emit(v);
    bool u = !is_signed(v->dtype);
    values.push_back(u ? b_.CreateZExt(x, b_.getInt64Ty()) : b_.CreateSExtOrTrunc(x, b_.getInt64Ty()));
  }
  llvm::StructType* type = error_slot_type();
  llvm::Value* slot = error_slot();
  llvm::Value* won = b_.CreateExtractValue(
      b_.CreateAtomicCmpXchg(b_.CreateStructGEP(type, slot, 0), b_.getInt32(0), b_.getInt32(1),
                             llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic,
                             llvm::AtomicOrdering::Monotonic),
      1);
  b_.CreateCondBr(won, record_bb, exit_bb);
  b_.SetInsertPoint(record_bb);
  std::string name = kernel_symbol_ + ".assert";
  b_.CreateStore(b_.CreateGlobalString(node.message, name, 0, &module_), b_.CreateStructGEP(type, slot, 1));
  b_.CreateStore(b_.getInt32(uint32_t(values.size())), b_.CreateStructGEP(type, slot, 2));
  for (size_t i = 0; i < values.size(); ++i)
    b_.CreateStore(values[i],
                   b_.CreateInBoundsGEP(type, slot, {b_.getInt32(0), b_.getInt32(3), b_.getInt32(i)}));
  b_.CreateBr(exit_bb);
  b_.SetInsertPoint(exit_bb);
  emit_failure_exit();
  b_.SetInsertPoint(ok_bb);
}

void CodegenLLVM::emit_failure_exit() {
  llvm::FunctionCallee scratch_free =
      module_.getOrInsertFunction("tessel_rt_scratch_free", b_.getVoidTy(), b_.getPtrTy());
  for (size_t i = live_heap_.size(); i-- > 0;) b_.CreateCall(scratch_free, {live_heap_[i]});
  if (!in_kernel_entry_) {
    b_.CreateRetVoid();
    return;
  }
  llvm::StructType* type = error_slot_type();
  llvm::Value* slot = error_slot();
  llvm::FunctionCallee report = module_.getOrInsertFunction("tessel_rt_kernel_error", b_.getVoidTy(),
                                                            b_.getPtrTy(), b_.getPtrTy(), b_.getInt32Ty());
  llvm::Value* message = b_.CreateLoad(b_.getPtrTy(), b_.CreateStructGEP(type, slot, 1));
  llvm::Value* count = b_.CreateLoad(b_.getInt32Ty(), b_.CreateStructGEP(type, slot, 2));
  b_.CreateCall(report, {message, b_.CreateStructGEP(type, slot, 3), count});
  b_.CreateRet(b_.getInt32(1));
}

}  // namespace tessel::codegen
