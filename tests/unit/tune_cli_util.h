// What the `tessel tune` CLI tests share: a short session's arguments on the
// tiny CNN, and a file's lines.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tessel::tune_cli_test {

inline const std::string kTinyCnn = std::string(TESSEL_SOURCE_DIR) + "/examples/tiny_cnn.onnx";

inline std::vector<std::string> tune_args(const std::filesystem::path& log, int trials) {
  return {"tune",     kTinyCnn, "--input-shape", "image=1x1x28x28", "--log",    log.string(),
          "--trials", std::to_string(trials), "--threads", "1",      "--per-round", "6"};
}

inline std::vector<std::string> lines_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The measured candidates of a log: its lines without the fusion and layout
// decisions and the checks in the model.
inline std::vector<std::string> measured_of(const std::filesystem::path& log) {
  std::vector<std::string> out;
  for (std::string& line : lines_of(log))
    if (line.rfind("{\"fusion\"", 0) != 0 && line.rfind("{\"layout\"", 0) != 0 &&
        line.rfind("{\"in_model\"", 0) != 0)
      out.push_back(std::move(line));
  return out;
}

}  // namespace tessel::tune_cli_test
