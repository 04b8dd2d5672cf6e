// Structural equality and hashing of the tensor IR. Variables and buffers are
// compared by position of definition, not by name or identity: two functions
// that differ only in the names of their variables and buffers are equal and
// hash alike. The tuner keys its tasks and its database by this hash.
#pragma once

#include <cstdint>

#include "ir/tensor/function.h"

namespace tessel::tir {

bool structural_equal(const Expr& a, const Expr& b);
bool structural_equal(const Stmt& a, const Stmt& b);
bool structural_equal(const PrimFunc& a, const PrimFunc& b);  // the function's name is not compared

uint64_t structural_hash(const Expr& e);
uint64_t structural_hash(const Stmt& s);
uint64_t structural_hash(const PrimFunc& f);

}  // namespace tessel::tir
