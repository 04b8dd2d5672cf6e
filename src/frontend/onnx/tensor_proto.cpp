// Decoding and encoding of ONNX tensors.
#include "src/frontend/onnx/tensor_proto.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "ir/core/diagnostics.h"

namespace tessel::onnx_frontend {

namespace fs = std::filesystem;

std::optional<DType> dtype_from_onnx(int t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: return DType::kF32;
    case onnx::TensorProto::FLOAT16: return DType::kF16;
    case onnx::TensorProto::BFLOAT16: return DType::kBF16;
    case onnx::TensorProto::DOUBLE: return DType::kF64;
    case onnx::TensorProto::INT8: return DType::kI8;
    case onnx::TensorProto::UINT8: return DType::kU8;
    case onnx::TensorProto::INT32: return DType::kI32;
    case onnx::TensorProto::INT64: return DType::kI64;
    case onnx::TensorProto::BOOL: return DType::kBool;
    case onnx::TensorProto::INT16: return DType::kI16;
    case onnx::TensorProto::UINT16: return DType::kU16;
    case onnx::TensorProto::UINT32: return DType::kU32;
    case onnx::TensorProto::UINT64: return DType::kU64;
    // Newer than the ONNX headers here: the 8- and 4-bit floats, the 4- and 2-bit integers.
    case 17: return DType::kF8E4M3FN;
    case 18: return DType::kF8E4M3FNUZ;
    case 19: return DType::kF8E5M2;
    case 20: return DType::kF8E5M2FNUZ;
    case 21: return DType::kU4;
    case 22: return DType::kI4;
    case 23: return DType::kF4E2M1;
    case 24: return DType::kF8E8M0;
    case 25: return DType::kU2;
    case 26: return DType::kI2;
    default: return std::nullopt;
  }
}

int dtype_to_onnx(DType t) {
  switch (t) {
    case DType::kF32: return onnx::TensorProto::FLOAT;
    case DType::kF16: return onnx::TensorProto::FLOAT16;
    case DType::kBF16: return onnx::TensorProto::BFLOAT16;
    case DType::kF64: return onnx::TensorProto::DOUBLE;
    case DType::kI8: return onnx::TensorProto::INT8;
    case DType::kU8: return onnx::TensorProto::UINT8;
    case DType::kI32: return onnx::TensorProto::INT32;
    case DType::kI64: return onnx::TensorProto::INT64;
    case DType::kBool: return onnx::TensorProto::BOOL;
    case DType::kI16: return onnx::TensorProto::INT16;
    case DType::kU16: return onnx::TensorProto::UINT16;
    case DType::kU32: return onnx::TensorProto::UINT32;
    case DType::kU64: return onnx::TensorProto::UINT64;
    case DType::kF8E4M3FN: return 17;
    case DType::kF8E4M3FNUZ: return 18;
    case DType::kF8E5M2: return 19;
    case DType::kF8E5M2FNUZ: return 20;
    case DType::kU4: return 21;
    case DType::kI4: return 22;
    case DType::kF4E2M1: return 23;
    case DType::kF8E8M0: return 24;
    case DType::kU2: return 25;
    case DType::kI2: return 26;
  }
  return onnx::TensorProto::UNDEFINED;
}

std::string onnx_type_name(int t) {
  if (onnx::TensorProto_DataType_IsValid(t))
    return onnx::TensorProto_DataType_Name(onnx::TensorProto_DataType(t));
  return "type " + std::to_string(t);  // newer than our ONNX headers (float8, int4, ...)
}

namespace {

Span tensor_span(const std::string& name) { return Span{"", "tensor '" + name + "'"}; }

// Resolves an external-data location, refusing anything outside model_dir.
fs::path resolve_external(const std::string& location, const std::string& model_dir,
                          const std::string& tensor) {
  Span span = tensor_span(tensor);
  fs::path rel(location);
  TESSEL_USER_CHECK(!location.empty() && rel.is_relative(), span)
      << "external data location '" << location << "' must be a relative path inside the model's folder";
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(model_dir.empty() ? "." : model_dir), ec);
  fs::path full = fs::weakly_canonical(base / rel, ec);
  TESSEL_USER_CHECK(!ec, span) << "cannot resolve external data location '" << location << "'";
  auto [b, f] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  TESSEL_USER_CHECK(b == base.end(), span)
      << "external data location '" << location << "' escapes the model's folder " << base.string();
  return full;
}

int64_t parse_int(const std::string& text, const std::string& key, const Span& span) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  TESSEL_USER_CHECK(ec == std::errc() && end == text.data() + text.size(), span)
      << "external data " << key << " '" << text << "' is not an integer";
  return v;
}

std::string read_external(const onnx::TensorProto& p, const std::string& model_dir, size_t want) {
  std::string location;
  int64_t offset = 0, length = int64_t(want);
  Span span = tensor_span(p.name());
  for (const auto& kv : p.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = parse_int(kv.value(), "offset", span);
    else if (kv.key() == "length") length = parse_int(kv.value(), "length", span);
  }
  fs::path path = resolve_external(location, model_dir, p.name());
  // A folder or a FIFO would read as garbage or block forever.
  std::error_code ec;
  TESSEL_USER_CHECK(fs::is_regular_file(path, ec), span)
      << "external data file " << path.string() << " does not exist or is not a regular file";
  std::ifstream in(path, std::ios::binary);
  TESSEL_USER_CHECK(in.good(), span) << "cannot open external data file " << path.string();
  in.seekg(0, std::ios::end);
  int64_t size = int64_t(in.tellg());
  // Written so that nothing overflows: offset and length come from the model.
  TESSEL_USER_CHECK(offset >= 0 && length == int64_t(want) && offset <= size && length <= size - offset, span)
      << "external data in " << path.string() << " (offset " << offset << ", length " << length
      << ", file size " << size << ") does not hold the " << want << " bytes the tensor needs";
  std::string bytes(size_t(length), '\0');
  in.seekg(offset);
  in.read(bytes.data(), length);
  TESSEL_USER_CHECK(in.gcount() == length, span)
      << "cannot read " << length << " bytes at offset " << offset << " of external data file " << path.string();
  return bytes;
}

// The element count that dims promise, checked before anything is allocated,
// so that a few bytes of model cannot ask for terabytes.
int64_t promised_elements(const Dims& dims, DType dtype, const Span& span) {
  bool empty = false;
  for (int64_t d : dims) {
    TESSEL_USER_CHECK(d >= 0, span) << "has a negative dimension " << d;
    empty = empty || d == 0;
  }
  if (empty) return 0;
  int64_t n = 1;
  for (int64_t d : dims)
    TESSEL_USER_CHECK(!__builtin_mul_overflow(n, d, &n), span) << "shape " << dims_str(dims) << " is too large";
  TESSEL_USER_CHECK(n <= INT64_MAX / int64_t(dtype_size(dtype)), span) << "shape " << dims_str(dims) << " is too large";
  return n;
}

// How many values the typed field that ONNX uses for dtype holds.
int64_t typed_count(const onnx::TensorProto& p, DType dtype) {
  switch (dtype) {
    case DType::kF32: return p.float_data_size();
    case DType::kF64: return p.double_data_size();
    case DType::kI64: return p.int64_data_size();
    case DType::kU32:
    case DType::kU64: return p.uint64_data_size();
    default: return p.int32_data_size();  // the narrow integers, bool and the 16-bit floats
  }
}

void copy_typed_field(Tensor& t, const onnx::TensorProto& p) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (is_small(t.dtype())) {  // the 8-bit storage types: each entry holds a code
      static_cast<uint8_t*>(t.raw())[i] = uint8_t(p.int32_data(int(i)));
      continue;
    }
    switch (t.dtype()) {
      case DType::kF32: t.set_f64(i, p.float_data(int(i))); break;
      case DType::kF64: t.set_f64(i, p.double_data(int(i))); break;
      case DType::kI64: t.set_i64(i, p.int64_data(int(i))); break;
      case DType::kU32:
      case DType::kU64: t.set_i64(i, int64_t(p.uint64_data(int(i)))); break;
      case DType::kF16: t.data<Half>()[i] = Half{uint16_t(p.int32_data(int(i)))}; break;
      case DType::kBF16: t.data<BFloat16>()[i] = BFloat16{uint16_t(p.int32_data(int(i)))}; break;
      default: t.set_i64(i, p.int32_data(int(i))); break;
    }
  }
}

}  // namespace

// Elements of fewer than 8 bits are packed in ONNX's data, the first in the
// lowest bits; Tessel holds one per byte.
int packed_bits(DType t) {
  return is_small(t) ? small_types::width_bits(small_format(t)) : 8;
}

void unpack(const std::string& bytes, int bits, Tensor& t) {
  uint8_t* out = static_cast<uint8_t*>(t.raw());
  int per_byte = 8 / bits;
  for (int64_t i = 0; i < t.numel(); ++i)
    out[i] = uint8_t((uint8_t(bytes[size_t(i / per_byte)]) >> ((i % per_byte) * bits)) & ((1 << bits) - 1));
}

std::string pack(const Tensor& t, int bits) {
  int per_byte = 8 / bits;
  std::string bytes(size_t((t.numel() + per_byte - 1) / per_byte), '\0');
  const uint8_t* in = static_cast<const uint8_t*>(t.raw());
  for (int64_t i = 0; i < t.numel(); ++i)
    bytes[size_t(i / per_byte)] =
        char(uint8_t(bytes[size_t(i / per_byte)]) | ((in[i] & ((1 << bits) - 1)) << ((i % per_byte) * bits)));
  return bytes;
}

Tensor tensor_from_proto(const onnx::TensorProto& p, const std::string& model_dir) {
  Span span = tensor_span(p.name());
  auto dtype = dtype_from_onnx(p.data_type());
  TESSEL_USER_CHECK(dtype.has_value(), span) << "unsupported element type " << onnx_type_name(p.data_type());
  Dims dims(p.dims().begin(), p.dims().end());
  int64_t numel = promised_elements(dims, *dtype, span);
  int bits = packed_bits(*dtype);
  size_t want = bits == 8 ? size_t(numel) * dtype_size(*dtype) : size_t((numel * bits + 7) / 8);
  bool external = p.has_data_location() && p.data_location() == onnx::TensorProto::EXTERNAL;
  if (external || p.has_raw_data()) {
    std::string external_bytes = external ? read_external(p, model_dir, want) : std::string();
    const std::string& bytes = external ? external_bytes : p.raw_data();
    TESSEL_USER_CHECK(bytes.size() == want, span)
        << "has " << bytes.size() << " bytes of data, shape " << dims_str(dims) << " needs " << want;
    Tensor t(*dtype, dims);
    if (bits < 8)
      unpack(bytes, bits, t);
    else if (!bytes.empty())
      std::memcpy(t.raw(), bytes.data(), bytes.size());
    // A bool byte other than 0 or 1 is not a valid bool in C++.
    if (*dtype == DType::kBool)
      for (int64_t i = 0; i < numel; ++i) reinterpret_cast<uint8_t*>(t.raw())[i] = bytes[size_t(i)] != 0;
    return t;
  }
  int64_t have = typed_count(p, *dtype);
  if (bits < 8) {  // int32_data holds the packed bytes, one per entry
    TESSEL_USER_CHECK(have == (numel * bits + 7) / 8, span)
        << "has " << have << " packed bytes for shape " << dims_str(dims);
    Tensor t(*dtype, dims);
    std::string bytes;
    for (int i = 0; i < p.int32_data_size(); ++i) bytes.push_back(char(p.int32_data(i)));
    unpack(bytes, bits, t);
    return t;
  }
  TESSEL_USER_CHECK(have == numel, span) << "has " << have << " values for shape " << dims_str(dims);
  Tensor t(*dtype, dims);
  copy_typed_field(t, p);
  return t;
}

void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* proto) {
  proto->set_name(name);
  proto->set_data_type(dtype_to_onnx(t.dtype()));
  for (int64_t d : t.shape()) proto->add_dims(d);
  int bits = packed_bits(t.dtype());
  proto->set_raw_data(bits < 8 ? pack(t, bits) : std::string(static_cast<const char*>(t.raw()), t.nbytes()));
}

Tensor load_tensor_pb(const std::string& path, std::string* name) {
  std::error_code ec;  // a FIFO would block forever, a folder reads as nothing
  TESSEL_USER_CHECK(fs::is_regular_file(path, ec), Span{}) << path << ": no such file or not a regular file";
  std::ifstream in(path, std::ios::binary);
  TESSEL_USER_CHECK(in.good(), Span{}) << path << ": cannot open file";
  onnx::TensorProto proto;
  TESSEL_USER_CHECK(proto.ParseFromIstream(&in), Span{}) << path << ": not a serialised ONNX TensorProto";
  if (name) *name = proto.name();
  try {
    return tensor_from_proto(proto, fs::path(path).parent_path().string());
  } catch (const UserError& e) {
    throw UserError(path + ": " + e.what());
  }
}

void save_tensor_pb(const Tensor& t, const std::string& name, const std::string& path) {
  onnx::TensorProto proto;
  tensor_to_proto(t, name, &proto);
  std::ofstream out(path, std::ios::binary);
  TESSEL_USER_CHECK(out.good() && proto.SerializeToOstream(&out), Span{}) << path << ": cannot write file";
}

}  // namespace tessel::onnx_frontend
