// Types of graph values: a dtype and a shape whose dimensions may be unknown
// or symbolic ("N"), or whose rank may be unknown.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/core/dtype.h"
#include "ir/core/tensor.h"

namespace tessel::graph {

struct Dim {
  int64_t value = -1;  // -1: not known at compile time
  std::string symbol;  // ONNX dim_param, when the dimension is symbolic

  static Dim known(int64_t v) { return Dim{v, {}}; }
  static Dim unknown(std::string sym = {}) { return Dim{-1, std::move(sym)}; }
  bool is_known() const { return value >= 0; }
  bool operator==(const Dim& o) const {
    return is_known() ? value == o.value : (!o.is_known() && !symbol.empty() && symbol == o.symbol);
  }
};

// ONNX sets no limit; real models stay far below it, and a rank read from a
// corrupt model must not turn into a gigantic allocation.
inline constexpr int kMaxRank = 64;

struct TensorType {
  DType dtype = DType::kF32;
  std::vector<Dim> dims;
  bool rank_known = true;

  TensorType() = default;
  TensorType(DType t, const Dims& shape);
  static TensorType unknown_rank(DType t);
  static TensorType of_rank(DType t, int rank);  // every dimension unknown

  int rank() const { return int(dims.size()); }
  bool is_static() const;
  Dims static_dims() const;  // requires is_static()
  std::optional<int64_t> numel() const;
  std::string str() const;  // "f32[1, 3, N, ?]", "f32[*]" for unknown rank
  bool operator==(const TensorType& o) const;
};

}  // namespace tessel::graph
