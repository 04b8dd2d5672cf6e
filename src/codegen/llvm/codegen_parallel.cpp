// Parallel loops: the body is outlined into `void body(i64 begin, i64 end,
// ptr closure)` and the loop becomes one call of the runtime's thread pool,
// `tessel_rt_parallel_for(extent, body, closure)` (src/runtime/kernel_abi.h),
// which hands each thread one contiguous chunk. The closure is a struct of
// what the body reads from outside: buffer bases and variables, and the
// kernel's error slot when the body asserts (a failed chunk records the
// error and returns; the kernel checks the slot after the loop).
#include <algorithm>

#include "ir/core/diagnostics.h"
#include "src/codegen/llvm/codegen_llvm.h"

namespace tessel::codegen {

using namespace tir;

namespace {

struct Captures {
  std::vector<const BufferNode*> buffers;
  std::vector<const VarNode*> vars;
};

// What `body` uses of `scope`, in a deterministic order (first use).
Captures captures_of(const Stmt& body, const Scope& scope) {
  Captures c;
  auto add_buffer = [&](const BufferNode* b) {
    if (scope.buffers.count(b) && std::find(c.buffers.begin(), c.buffers.end(), b) == c.buffers.end())
      c.buffers.push_back(b);
  };
  walk(body, [&](const Stmt& s) {
    if (s->kind == StmtKind::kStore) add_buffer(static_cast<const StoreNode&>(*s).buffer.get());
    return true;
  });
  walk_exprs(body, [&](const Expr& e) {
    if (e->kind == ExprKind::kLoad) add_buffer(static_cast<const LoadNode&>(*e).buffer.get());
    if (e->kind == ExprKind::kVar) {
      auto* v = static_cast<const VarNode*>(e.get());
      if (scope.vars.count(v) && std::find(c.vars.begin(), c.vars.end(), v) == c.vars.end())
        c.vars.push_back(v);
    }
  });
  return c;
}

}  // namespace

void CodegenLLVM::emit_parallel(const ForNode& loop) {
  Captures cap = captures_of(loop.body, scope_);
  bool asserts = false;
  walk(loop.body, [&](const Stmt& s) {
    asserts = asserts || s->kind == StmtKind::kAssert;
    return !asserts;
  });
  llvm::Value* begin = emit(loop.min);
  llvm::Value* extent = b_.CreateSExtOrTrunc(emit(loop.extent), b_.getInt64Ty());

  // The closure, filled in the caller: buffer bases, then variables, then the loop's start.
  std::vector<llvm::Type*> fields(cap.buffers.size(), b_.getPtrTy());
  for (const VarNode* v : cap.vars) fields.push_back(reg_type(v->dtype));
  fields.push_back(begin->getType());
  if (asserts) fields.push_back(b_.getPtrTy());
  auto* closure_type = llvm::StructType::get(ctx_, fields);
  llvm::AllocaInst* closure = entry_alloca(closure_type, nullptr, 8);
  std::vector<llvm::Value*> values;
  for (const BufferNode* buf : cap.buffers) values.push_back(scope_.buffers.at(buf));
  for (const VarNode* v : cap.vars) values.push_back(scope_.vars.at(v));
  values.push_back(begin);
  if (asserts) values.push_back(error_slot());
  for (size_t i = 0; i < values.size(); ++i)
    b_.CreateStore(values[i], b_.CreateStructGEP(closure_type, closure, unsigned(i)));

  // The outlined chunk function unpacks the closure and calls the body, whose
  // buffer parameters are noalias like the kernel's.
  std::string name = kernel_symbol_ + ".parallel." + std::to_string(outlined_count_++);
  auto* chunk_type =
      llvm::FunctionType::get(b_.getVoidTy(), {b_.getInt64Ty(), b_.getInt64Ty(), b_.getPtrTy()}, false);
  llvm::Function* chunk = llvm::Function::Create(chunk_type, llvm::Function::InternalLinkage, name, module_);
  std::vector<llvm::Type*> body_params{b_.getInt64Ty(), b_.getInt64Ty()};
  body_params.insert(body_params.end(), fields.begin(), fields.end());
  llvm::Function* body = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), body_params, false),
                                                llvm::Function::InternalLinkage, name + ".body", module_);
  for (llvm::Function* f : {chunk, body}) {
    f->setDoesNotThrow();
    set_target_attributes(*f, options_.target);
  }
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  for (size_t i = 0; i < cap.buffers.size(); ++i)
    body->addParamAttr(unsigned(i + 2), llvm::Attribute::NoAlias);
  {
    llvm::IRBuilder<> cb(llvm::BasicBlock::Create(ctx_, "entry", chunk));
    std::vector<llvm::Value*> args{chunk->getArg(0), chunk->getArg(1)};
    for (size_t i = 0; i < fields.size(); ++i)
      args.push_back(
          cb.CreateLoad(fields[i], cb.CreateStructGEP(closure_type, chunk->getArg(2), unsigned(i))));
    cb.CreateCall(body, args);
    cb.CreateRetVoid();
  }

  // Emit the body's loop over [begin + chunk_begin, begin + chunk_end) in `body`.
  Scope saved_scope = std::move(scope_);
  llvm::Function* saved_function = function_;
  llvm::BasicBlock* saved_block = b_.GetInsertBlock();
  bool saved_entry = in_kernel_entry_;
  auto saved_groups = std::move(access_groups_);
  auto saved_locals = std::move(loop_local_buffers_);
  auto saved_heap = std::move(live_heap_);
  llvm::Value* saved_slot = error_slot_;
  live_heap_.clear();
  scope_ = Scope{};
  access_groups_.clear();
  loop_local_buffers_.clear();
  function_ = body;
  in_kernel_entry_ = false;
  ++parallel_depth_;
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", body));
  unsigned arg = 2;
  for (const BufferNode* buf : cap.buffers) scope_.buffers[buf] = body->getArg(arg++);
  for (const VarNode* v : cap.vars) scope_.vars[v] = body->getArg(arg++);
  llvm::Value* start = body->getArg(arg);
  error_slot_ = asserts ? body->getArg(arg + 1) : nullptr;
  emit_loop(loop.var->name, body->getArg(0), body->getArg(1), nullptr, [&](llvm::Value* iv) {
    scope_.vars[loop.var.get()] = b_.CreateAdd(start, b_.CreateSExtOrTrunc(iv, start->getType()));
    emit(loop.body);
  });
  b_.CreateRetVoid();
  --parallel_depth_;
  scope_ = std::move(saved_scope);
  function_ = saved_function;
  in_kernel_entry_ = saved_entry;
  access_groups_ = std::move(saved_groups);
  loop_local_buffers_ = std::move(saved_locals);
  live_heap_ = std::move(saved_heap);
  error_slot_ = saved_slot;
  b_.SetInsertPoint(saved_block);

  llvm::FunctionCallee parallel_for = module_.getOrInsertFunction(
      "tessel_rt_parallel_for", b_.getVoidTy(), b_.getInt64Ty(), b_.getPtrTy(), b_.getPtrTy());
  b_.CreateCall(parallel_for, {extent, chunk, closure});
  if (!asserts) return;
  llvm::Value* failed =
      b_.CreateLoad(b_.getInt32Ty(), b_.CreateStructGEP(error_slot_type(), error_slot(), 0), "failed");
  llvm::BasicBlock* fail_bb = llvm::BasicBlock::Create(ctx_, "parallel.failed", function_);
  llvm::BasicBlock* ok_bb = llvm::BasicBlock::Create(ctx_, "parallel.ok", function_);
  b_.CreateCondBr(b_.CreateICmpEQ(failed, b_.getInt32(0)), ok_bb, fail_bb);
  b_.SetInsertPoint(fail_bb);
  emit_failure_exit();
  b_.SetInsertPoint(ok_bb);
}

}  // namespace tessel::codegen
