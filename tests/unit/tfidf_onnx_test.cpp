// TfIdfVectorizer (adapters_tfidf.cpp): a TFIDF case worked by hand on the
// reference and compiled, and what it refuses, by name: a pool of strings,
// float tokens, an index list that does not fit the pool.
#include <gtest/gtest.h>

#include "src/driver/compile_model.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

// Unigram 7 and bigram (7, 8) into slots 1 and 0, weights 2 and 3 by slot.
ModelBuilder tfidf_model(int type = onnx::TensorProto::INT64) {
  ModelBuilder b(13);
  b.input("x", {6}, type);
  onnx::NodeProto* n = b.node("TfIdfVectorizer", {"x"}, {"y"}, "tfidf");
  ModelBuilder::set_ints(n, "pool_int64s", {7, 7, 8});
  ModelBuilder::set_ints(n, "ngram_counts", {0, 1});
  ModelBuilder::set_ints(n, "ngram_indexes", {1, 0});
  ModelBuilder::set_int(n, "min_gram_length", 1);
  ModelBuilder::set_int(n, "max_gram_length", 2);
  ModelBuilder::set_int(n, "max_skip_count", 1);
  ModelBuilder::set_string(n, "mode", "TFIDF");
  auto* w = n->add_attribute();
  w->set_name("weights");
  w->set_type(onnx::AttributeProto::FLOATS);
  for (float v : {3.0f, 2.0f}) w->add_floats(v);
  b.output("y");
  return b;
}

TEST(TfIdfVectorizer, CountsEverySkipAndWeighsBySlot) {
  // 7 8 7 1 8 8: unigram 7 twice; bigram (7, 8) at skip 0 once (positions
  // 0-1) and at skip 1 once (2-4): slot 0 = 2 * 3, slot 1 = 2 * 2.
  ModelBuilder b = tfidf_model();
  Tensor x = Tensor::from_i64({7, 8, 7, 1, 8, 8});
  graph::Graph ref = b.import();
  EXPECT_EQ(reference::Executor(ref).run({x})[0].to_f64_vector(), (std::vector<double>{6, 4}));
  graph::Graph g = b.import();
  EXPECT_EQ(driver::JitModel(driver::compile_graph(g, {})).run({x})[0].to_f64_vector(),
            (std::vector<double>{6, 4}));
}

TEST(TfIdfVectorizer, WhatItCannotReadIsRefusedByName) {
  ModelBuilder strings = tfidf_model();
  ModelBuilder::set_strings(strings.g->mutable_node(0), "pool_strings", {"a", "b"});
  expect_import_error(strings, "node 'tfidf' (TfIdfVectorizer): pool_strings is not supported");
  ModelBuilder floats = tfidf_model(onnx::TensorProto::FLOAT);
  expect_import_error(floats, "X must hold int32 or int64 tokens");
  ModelBuilder slots(13);  // 8 unigrams moved to slots up to 2^24: a 2^27-entry 0/1 matrix
  slots.input("x", {6}, onnx::TensorProto::INT64);
  onnx::NodeProto* n = slots.node("TfIdfVectorizer", {"x"}, {"y"}, "tfidf");
  ModelBuilder::set_ints(n, "pool_int64s", {1, 2, 3, 4, 5, 6, 7, 8});
  ModelBuilder::set_ints(n, "ngram_counts", {0});
  ModelBuilder::set_ints(n, "ngram_indexes", std::vector<int64_t>(8, (int64_t(1) << 24) - 1));
  ModelBuilder::set_int(n, "min_gram_length", 1);
  ModelBuilder::set_int(n, "max_gram_length", 1);
  ModelBuilder::set_int(n, "max_skip_count", 0);
  ModelBuilder::set_string(n, "mode", "TF");
  slots.output("y");
  expect_import_error(slots, "8 n-grams into 16777216 output slots: more than 67108864 entries");
  ModelBuilder indexes = tfidf_model();
  for (auto& a : *indexes.g->mutable_node(0)->mutable_attribute())
    if (a.name() == "ngram_indexes") a.mutable_ints()->RemoveLast();
  expect_import_error(indexes, "ngram_indexes has 1 entries for 2 n-grams in the pool");
}

}  // namespace
}  // namespace tessel::onnx_test
