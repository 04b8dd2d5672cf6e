#include "src/codegen/machine_cache.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace tessel::codegen {

std::string tessel_cache_dir() {
  const char* cache = std::getenv("TESSEL_CACHE");
  if (cache && *cache) return cache;
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/tessel";
}

std::string machine_cache_path() {
  return tessel_cache_dir() + "/machine.json";
}

std::error_code replace_file(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::string temporary = path + ".tmp" + std::to_string(::getpid());
  std::ofstream(temporary) << text;
  fs::rename(temporary, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
  }
  return ec;
}

namespace {

nlohmann::json read_cache(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json::object();
  nlohmann::json cache = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return cache.is_object() ? cache : nlohmann::json::object();
}

}  // namespace

int cached_measurement(const std::string& path, const std::string& key, const std::function<int()>& measure) {
  nlohmann::json cache = read_cache(path);
  auto it = cache.find(key);
  if (it != cache.end() && it->is_number_integer() && it->get<int64_t>() >= 1 && it->get<int64_t>() <= 64)
    return it->get<int>();
  int value = measure();
  cache[key] = value;
  replace_file(path, cache.dump(2) + "\n");
  return value;
}

}  // namespace tessel::codegen
