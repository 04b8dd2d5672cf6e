// TensorType helpers and its printed form.
#include "ir/graph/types.h"

#include <sstream>

namespace tessel::graph {

TensorType::TensorType(DType t, const Dims& shape) : dtype(t) {
  for (int64_t d : shape) dims.push_back(Dim::known(d));
}

TensorType TensorType::unknown_rank(DType t) {
  TensorType type;
  type.dtype = t;
  type.rank_known = false;
  return type;
}

TensorType TensorType::of_rank(DType t, int rank) {
  TESSEL_USER_CHECK(rank >= 0 && rank <= kMaxRank, Span{})
      << "a tensor of rank " << rank << " is not supported (at most " << kMaxRank << ")";
  TensorType type;
  type.dtype = t;
  type.dims.assign(size_t(rank), Dim::unknown());
  return type;
}

bool TensorType::is_static() const {
  if (!rank_known) return false;
  for (const Dim& d : dims)
    if (!d.is_known()) return false;
  return true;
}

Dims TensorType::static_dims() const {
  TESSEL_ICHECK(is_static()) << "shape " << str() << " is not static";
  Dims out;
  for (const Dim& d : dims) out.push_back(d.value);
  return out;
}

std::optional<int64_t> TensorType::numel() const {
  if (!is_static()) return std::nullopt;
  return num_elements(static_dims());
}

std::string TensorType::str() const {
  std::ostringstream os;
  os << dtype_name(dtype) << "[";
  if (!rank_known) {
    os << "*]";
    return os.str();
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) os << ", ";
    if (dims[i].is_known()) os << dims[i].value;
    else os << (dims[i].symbol.empty() ? "?" : dims[i].symbol);
  }
  os << "]";
  return os.str();
}

bool TensorType::operator==(const TensorType& o) const {
  if (dtype != o.dtype || rank_known != o.rank_known || dims.size() != o.dims.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i].value != o.dims[i].value || dims[i].symbol != o.dims[i].symbol) return false;
  return true;
}

}  // namespace tessel::graph
