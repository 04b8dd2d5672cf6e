// Figures measured once per machine: measured when the cache has none (or
// cannot be read), read back after, kept per key.
#include "src/codegen/machine_cache.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/unit/cli_runner.h"

namespace tessel {
namespace {

using codegen::cached_measurement;

TEST(MachineCache, MeasuredOnceThenReadBack) {
  cli_test::TempDir dir;
  std::string path = (dir / "cache" / "machine.json").string();
  int measured = 0;
  auto measure = [&](int value) {
    return [&measured, value] {
      ++measured;
      return value;
    };
  };
  EXPECT_EQ(cached_measurement(path, "fmas a", measure(8)), 8);
  EXPECT_EQ(measured, 1);
  // Another process on the same machine: the kept value, not a new measurement.
  EXPECT_EQ(cached_measurement(path, "fmas a", measure(4)), 8);
  EXPECT_EQ(measured, 1);
  // Another key is measured and kept beside the first.
  EXPECT_EQ(cached_measurement(path, "fmas b", measure(4)), 4);
  EXPECT_EQ(cached_measurement(path, "fmas a", measure(2)), 8);
  EXPECT_EQ(cached_measurement(path, "fmas b", measure(2)), 4);
  EXPECT_EQ(measured, 2);
}

TEST(MachineCache, AnUnreadableCacheOrValueIsMeasuredAgain) {
  cli_test::TempDir dir;
  std::string path = (dir / "machine.json").string();
  for (const char* text :
       {"not json", "[1, 2]", R"({"fmas a": 0})", R"({"fmas a": "8"})", R"({"fmas a": 65})"}) {
    SCOPED_TRACE(text);
    std::ofstream(path) << text;
    EXPECT_EQ(cached_measurement(path, "fmas a", [] { return 16; }), 16);
    EXPECT_EQ(cached_measurement(path, "fmas a", [] { return 2; }), 16) << "rewritten";
  }
  // A cache that cannot be written (its folder is a file): the measurement all the same.
  std::string blocked = (dir / "machine.json" / "machine.json").string();
  EXPECT_EQ(cached_measurement(blocked, "fmas a", [] { return 4; }), 4);
}

}  // namespace
}  // namespace tessel
