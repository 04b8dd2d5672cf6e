// nvrtc_compile: one program per call, compiled once for the real
// architecture: NVRTC keeps the PTX it assembled the CUBIN from (the fallback
// a newer GPU's driver compiles), and ptxas's report.
#include "src/codegen/cuda/nvrtc_compile.h"

#include <cctype>
#include <sstream>

#include "ir/core/diagnostics.h"
#include "src/codegen/cuda/nvrtc_library.h"

namespace tessel::codegen {

namespace {

class Program {
 public:
  Program(const Nvrtc& nvrtc, const std::string& source, const std::string& name) : nvrtc_(nvrtc) {
    int status = nvrtc.create_program(&program_, source.c_str(), name.c_str(), 0, nullptr, nullptr);
    TESSEL_ICHECK(status == 0) << "nvrtcCreateProgram: " << nvrtc.get_error_string(status);
  }
  ~Program() { nvrtc_.destroy_program(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // True when it compiled; the log either way.
  bool compile(const std::vector<std::string>& options, std::string& log) {
    std::vector<const char*> argv;
    for (const std::string& o : options) argv.push_back(o.c_str());
    int status = nvrtc_.compile_program(program_, int(argv.size()), argv.data());
    size_t size = 0;
    if (nvrtc_.get_program_log_size(program_, &size) == 0 && size > 1) {
      log.assign(size, '\0');
      nvrtc_.get_program_log(program_, log.data());
      log.resize(size - 1);
    }
    return status == 0;
  }
  std::string ptx() {
    size_t size = 0;
    TESSEL_ICHECK(nvrtc_.get_ptx_size(program_, &size) == 0) << "nvrtcGetPTXSize failed";
    std::string out(size, '\0');
    TESSEL_ICHECK(nvrtc_.get_ptx(program_, out.data()) == 0) << "nvrtcGetPTX failed";
    if (!out.empty() && out.back() == '\0') out.pop_back();
    return out;
  }
  std::vector<char> cubin() {
    size_t size = 0;
    TESSEL_ICHECK(nvrtc_.get_cubin_size(program_, &size) == 0) << "nvrtcGetCUBINSize failed";
    std::vector<char> out(size);
    TESSEL_ICHECK(nvrtc_.get_cubin(program_, out.data()) == 0) << "nvrtcGetCUBIN failed";
    return out;
  }

 private:
  const Nvrtc& nvrtc_;
  Nvrtc::Program program_ = nullptr;
};

std::vector<std::string> options_for(const std::string& arch) {
  return {"--gpu-architecture=" + arch, "--std=c++17"};
}

// The number before `unit` in line ("12 bytes spill stores" -> 12), or -1.
int64_t number_before(const std::string& line, const std::string& unit) {
  size_t at = line.find(unit);
  if (at == std::string::npos || at == 0) return -1;
  size_t end = at;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  return begin == end ? -1 : std::stoll(line.substr(begin, end - begin));
}

}  // namespace

std::map<std::string, KernelResources> parse_ptxas_report(const std::string& log) {
  std::map<std::string, KernelResources> out;
  KernelResources* current = nullptr;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    const std::string entry = "Compiling entry function '";
    if (size_t at = line.find(entry); at != std::string::npos) {
      size_t begin = at + entry.size(), end = line.find('\'', begin);
      current = end == std::string::npos ? nullptr : &out[line.substr(begin, end - begin)];
      continue;
    }
    if (!current) continue;
    if (int64_t v = number_before(line, "bytes stack frame"); v >= 0) current->stack_bytes = v;
    if (int64_t v = number_before(line, "bytes spill stores"); v >= 0) current->spill_store_bytes = v;
    if (int64_t v = number_before(line, "bytes spill loads"); v >= 0) current->spill_load_bytes = v;
    if (int64_t v = number_before(line, "registers"); v >= 0 && line.find("Used ") != std::string::npos)
      current->registers = int(v);
  }
  return out;
}

NvrtcResult nvrtc_compile(const std::string& source, const std::string& name, int sm, bool fast_math) {
  std::string why;
  const Nvrtc* nvrtc = load_nvrtc(&why);
  TESSEL_USER_CHECK(nvrtc != nullptr, Span{}) << "cannot compile CUDA C: " << why;
  NvrtcResult result;
  Program program(*nvrtc, source, name);
  std::vector<std::string> options = options_for("sm_" + std::to_string(sm));
  options.push_back("--ptxas-options=--verbose");
  if (fast_math) options.push_back("--use_fast_math");
  bool ok = program.compile(options, result.log);
  TESSEL_ICHECK(ok) << "NVRTC rejected the generated CUDA C (" << name << ", sm_" << sm << "):\n"
                    << result.log;
  result.ptx = program.ptx();
  result.cubin = program.cubin();
  result.resources = parse_ptxas_report(result.log);
  return result;
}

}  // namespace tessel::codegen
