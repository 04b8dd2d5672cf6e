// The GPU program a model library embeds: it reads back as written, and a
// corrupt one is refused with the reason, whether the checksum catches it or
// only the checks behind it do.
#include <gtest/gtest.h>

#include "src/runtime/checksum.h"
#include "src/runtime/gpu/gpu_program.h"
#include "src/runtime/plan.h"

namespace tessel::rt {
namespace {

GpuProgram two_launches() {
  GpuProgram p;
  GpuFunction f;
  f.symbol = "k_conv";
  f.num_inputs = 2;
  f.num_outputs = 1;
  f.param_bytes = {400, 36, 256};
  f.scratch_bytes = 1024;
  GpuLaunch pad{"k_conv_l0", {4, 1, 1}, {64, 1, 1},
                0,           false,     {{GpuArg::Kind::kParam, 0}, {GpuArg::Kind::kScratch, 0}}};
  GpuLaunch conv{
      "k_conv_l1", {2, 2, 1},
      {16, 16, 1}, 4096,
      true,        {{GpuArg::Kind::kScratch, 0}, {GpuArg::Kind::kParam, 1}, {GpuArg::Kind::kParam, 2}}};
  f.launches = {pad, conv};
  p.functions = {f};
  p.asserts = {{"index {} out of range", 1}};
  p.image = {90,
             std::string("\x7f"
                         "ELF\0cubin",
                         9),
             ".version 8.0\n"};
  return p;
}

std::string corrupt_reason(std::vector<uint8_t> bytes) {
  try {
    deserialize_gpu_program(bytes.data(), bytes.size());
  } catch (const PlanError& e) {
    return e.what();
  }
  return "";
}

// The bytes with the trailing checksum made to match again.
std::vector<uint8_t> resealed(std::vector<uint8_t> bytes) {
  uint64_t sum = checksum64(bytes.data(), bytes.size() - 8);
  for (int i = 0; i < 8; ++i) bytes[bytes.size() - 8 + size_t(i)] = uint8_t(sum >> (8 * i));
  return bytes;
}

TEST(GpuProgramFormat, AProgramReadsBackAsWritten) {
  GpuProgram p = two_launches();
  std::vector<uint8_t> bytes = serialize_gpu_program(p);
  GpuProgram q = deserialize_gpu_program(bytes.data(), bytes.size());
  ASSERT_EQ(q.functions.size(), 1u);
  const GpuFunction& f = q.functions[0];
  EXPECT_EQ(f.symbol, "k_conv");
  EXPECT_EQ(f.param_bytes, (std::vector<uint64_t>{400, 36, 256}));
  EXPECT_EQ(f.scratch_bytes, 1024u);
  ASSERT_EQ(f.launches.size(), 2u);
  EXPECT_EQ(f.launches[1].kernel, "k_conv_l1");
  EXPECT_EQ(f.launches[1].block[1], 16u);
  EXPECT_EQ(f.launches[1].shared_bytes, 4096u);
  EXPECT_TRUE(f.launches[1].has_barrier);
  EXPECT_EQ(f.launches[1].args[0].kind, GpuArg::Kind::kScratch);
  EXPECT_EQ(f.launches[1].args[2].value, 2u);
  EXPECT_EQ(q.asserts[0].format, "index {} out of range");
  EXPECT_EQ(q.image.sm, 90);
  EXPECT_EQ(q.image.cubin, p.image.cubin);
  EXPECT_EQ(q.image.ptx, p.image.ptx);
}

TEST(GpuProgramFormat, ACorruptProgramIsRefusedWithItsReason) {
  std::vector<uint8_t> bytes = serialize_gpu_program(two_launches());
  std::vector<uint8_t> flipped = bytes;
  flipped[20] ^= 1;
  EXPECT_EQ(corrupt_reason(flipped), "corrupt GPU program: checksum mismatch");
  EXPECT_EQ(corrupt_reason(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 10)),
            "corrupt GPU program: too short");
  std::vector<uint8_t> magic = bytes;
  magic[0] = 'X';
  EXPECT_EQ(corrupt_reason(magic), "corrupt GPU program: bad magic (not TSLGPU)");

  GpuProgram wide = two_launches();  // what a matching checksum lets through is still checked
  wide.functions[0].launches[1].block[2] = 8;
  EXPECT_EQ(corrupt_reason(serialize_gpu_program(wide)),
            "corrupt GPU program: k_conv_l1 has 2048 threads per block");
  GpuProgram stray = two_launches();
  stray.functions[0].launches[0].args[0].value = 3;
  EXPECT_EQ(corrupt_reason(serialize_gpu_program(stray)),
            "corrupt GPU program: k_conv_l0 has an argument outside k_conv's parameters and scratch");
  std::vector<uint8_t> longer = bytes;
  longer.insert(longer.end() - 8, uint8_t(0));
  EXPECT_EQ(corrupt_reason(resealed(longer)), "corrupt GPU program: 1 bytes after the program");
  std::vector<uint8_t> truncated(bytes.begin(), bytes.end() - 20);
  EXPECT_NE(corrupt_reason(resealed(truncated)).find("corrupt GPU program: truncated reading"),
            std::string::npos);
}

}  // namespace
}  // namespace tessel::rt
