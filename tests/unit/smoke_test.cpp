#include <gtest/gtest.h>
#include "ir/graph/op_registry.h"
TEST(Smoke, RegistryBuilds) { EXPECT_NO_THROW(tessel::graph::OpRegistry::global()); }
