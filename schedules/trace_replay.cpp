// Trace::apply: replays instructions on a Schedule through its public
// methods, mapping the trace's handle ids to the ones the Schedule hands out.
// A malformed instruction (wrong operands or attributes) is an
// std::invalid_argument; an illegal step there is the Schedule's ScheduleError.
#include <functional>
#include <map>
#include <stdexcept>

#include "schedules/schedule.h"

namespace tessel::sched {

namespace {

class Replayer {
 public:
  Replayer(Schedule& sch, const Instruction& inst, size_t index,
           std::map<std::pair<OperandKind, int64_t>, int>& ids)
      : sch_(sch), inst_(inst), index_(index), ids_(ids) {}

  const Instruction& inst() const { return inst_; }
  Schedule& sch() { return sch_; }

  [[noreturn]] void malformed(const std::string& why) const {
    throw std::invalid_argument("trace instruction " + std::to_string(index_) + " (" + inst_.kind +
                                "): " + why);
  }
  void expect_inputs(size_t n) const {
    if (inst_.inputs.size() != n) malformed("expected " + std::to_string(n) + " inputs");
  }
  const Operand& input(size_t i) const {
    if (i >= inst_.inputs.size()) malformed("missing input " + std::to_string(i));
    return inst_.inputs[i];
  }
  int handle(const Operand& op, OperandKind kind) const {
    if (op.kind != kind) malformed("an input has the wrong kind");
    auto it = ids_.find({op.kind, op.value});
    if (it == ids_.end())
      malformed("input refers to handle " + std::to_string(op.value) + ", defined by no earlier instruction");
    return it->second;
  }
  LoopRV loop(size_t i) const { return {handle(input(i), OperandKind::kLoop)}; }
  BlockRV block(size_t i) const { return {handle(input(i), OperandKind::kBlock)}; }
  std::vector<LoopRV> loops_from(size_t first) const {
    std::vector<LoopRV> out;
    for (size_t i = first; i < inst_.inputs.size(); ++i) out.push_back(loop(i));
    return out;
  }
  Factor factor(size_t i) const {
    const Operand& op = input(i);
    if (op.kind == OperandKind::kConst) return Factor(op.value);
    return Factor(IntRV{handle(op, OperandKind::kInt)});
  }
  template <typename T>
  const T& attr(const std::string& key) const {
    auto it = inst_.attrs.find(key);
    if (it == inst_.attrs.end()) malformed("missing attribute " + key);
    const T* value = std::get_if<T>(&it->second);
    if (!value) malformed("attribute " + key + " has the wrong type");
    return *value;
  }
  int int_attr(const std::string& key) const {
    int64_t v = attr<int64_t>(key);
    if (v < INT32_MIN || v > INT32_MAX) malformed("attribute " + key + " is out of range");
    return int(v);
  }
  std::vector<double> doubles_attr(const std::string& key) const {
    auto it = inst_.attrs.find(key);
    if (it != inst_.attrs.end())
      if (const auto* ints = std::get_if<std::vector<int64_t>>(&it->second))
        return {ints->begin(), ints->end()};
    return attr<std::vector<double>>(key);
  }
  std::optional<int64_t> single_decision() const {
    if (!inst_.decision) return std::nullopt;
    if (inst_.decision->size() != 1) malformed("the decision is one index");
    return inst_.decision->front();
  }

  // Maps the recorded outputs to those of the instruction the replay just appended.
  void map_outputs() {
    const Instruction& replayed = sch_.trace().instructions().back();
    if (replayed.outputs.size() != inst_.outputs.size()) {
      throw ScheduleError("replay.output_mismatch",
                          "replaying instruction " + std::to_string(index_) + " (" + inst_.kind + ") gave " +
                              std::to_string(replayed.outputs.size()) + " outputs, not " +
                              std::to_string(inst_.outputs.size()));
    }
    for (size_t i = 0; i < replayed.outputs.size(); ++i) {
      if (replayed.outputs[i].kind != inst_.outputs[i].kind) malformed("an output has the wrong kind");
      ids_[{inst_.outputs[i].kind, inst_.outputs[i].value}] = int(replayed.outputs[i].value);
    }
  }

 private:
  Schedule& sch_;
  const Instruction& inst_;
  size_t index_;
  std::map<std::pair<OperandKind, int64_t>, int>& ids_;
};

tir::MemScope scope_of(const Replayer& r) {
  const std::string& name = r.attr<std::string>("scope");
  for (tir::MemScope s : {tir::MemScope::kGlobal, tir::MemScope::kShared, tir::MemScope::kLocal})
    if (mem_scope_name(s) == name) return s;
  r.malformed("unknown memory scope " + name);
}

using Step = std::function<void(Replayer&)>;

const std::map<std::string, Step>& steps() {
  static const std::map<std::string, Step> table = {
      {"get_block", [](Replayer& r) { r.expect_inputs(0), r.sch().get_block(r.attr<std::string>("name")); }},
      {"get_loops", [](Replayer& r) { r.expect_inputs(1), r.sch().get_loops(r.block(0)); }},
      {"get_producers", [](Replayer& r) { r.expect_inputs(1), r.sch().get_producers(r.block(0)); }},
      {"get_consumers", [](Replayer& r) { r.expect_inputs(1), r.sch().get_consumers(r.block(0)); }},
      {"split",
       [](Replayer& r) {
         std::vector<Factor> factors;
         for (size_t i = 1; i < r.inst().inputs.size(); ++i) factors.push_back(r.factor(i));
         r.sch().split(r.loop(0), factors, r.attr<int64_t>("exact") != 0);
       }},
      {"fuse", [](Replayer& r) { r.sch().fuse(r.loops_from(0)); }},
      {"reorder", [](Replayer& r) { r.sch().reorder(r.loops_from(0)); }},
      {"parallel", [](Replayer& r) { r.expect_inputs(1), r.sch().parallel(r.loop(0)); }},
      {"vectorize", [](Replayer& r) { r.expect_inputs(1), r.sch().vectorize(r.loop(0)); }},
      {"unroll", [](Replayer& r) { r.expect_inputs(1), r.sch().unroll(r.loop(0)); }},
      {"bind",
       [](Replayer& r) { r.expect_inputs(1), r.sch().bind(r.loop(0), r.attr<std::string>("thread")); }},
      {"annotate",
       [](Replayer& r) {
         r.expect_inputs(1);
         const std::string& key = r.attr<std::string>("key");
         int64_t value = r.attr<int64_t>("value");
         if (r.input(0).kind == OperandKind::kBlock) return r.sch().annotate(r.block(0), key, value);
         r.sch().annotate(r.loop(0), key, value);
       }},
      {"cache_read",
       [](Replayer& r) {
         r.expect_inputs(1), r.sch().cache_read(r.block(0), r.int_attr("index"), scope_of(r));
       }},
      {"cache_write",
       [](Replayer& r) {
         r.expect_inputs(1), r.sch().cache_write(r.block(0), r.int_attr("index"), scope_of(r));
       }},
      {"compute_at", [](Replayer& r) { r.expect_inputs(2), r.sch().compute_at(r.block(0), r.loop(1)); }},
      {"reverse_compute_at",
       [](Replayer& r) { r.expect_inputs(2), r.sch().reverse_compute_at(r.block(0), r.loop(1)); }},
      {"compute_inline", [](Replayer& r) { r.expect_inputs(1), r.sch().compute_inline(r.block(0)); }},
      {"reverse_compute_inline",
       [](Replayer& r) { r.expect_inputs(1), r.sch().reverse_compute_inline(r.block(0)); }},
      {"rfactor",
       [](Replayer& r) { r.expect_inputs(1), r.sch().rfactor(r.loop(0), r.int_attr("factor_axis")); }},
      {"decompose_reduction",
       [](Replayer& r) { r.expect_inputs(2), r.sch().decompose_reduction(r.block(0), r.loop(1)); }},
      {"storage_align",
       [](Replayer& r) {
         r.expect_inputs(1);
         r.sch().storage_align(r.block(0), r.int_attr("buffer_index"), r.int_attr("axis"),
                               r.attr<int64_t>("factor"), r.attr<int64_t>("offset"));
       }},
      {"prefetch",
       [](Replayer& r) {
         r.expect_inputs(2), r.sch().prefetch(r.block(0), r.int_attr("read_index"), r.loop(1));
       }},
      {"sample_compute_location",
       [](Replayer& r) {
         r.expect_inputs(1), r.sch().sample_compute_location(r.block(0), r.single_decision());
       }},
      {"sample_perfect_tile",
       [](Replayer& r) {
         r.expect_inputs(1);
         r.sch().sample_perfect_tile(r.loop(0), r.int_attr("n"), r.attr<int64_t>("max_innermost"),
                                     r.inst().decision);
       }},
      {"sample_categorical",
       [](Replayer& r) {
         r.expect_inputs(0);
         r.sch().sample_categorical(r.attr<std::vector<int64_t>>("candidates"), r.doubles_attr("probs"),
                                    r.single_decision());
       }},
  };
  return table;
}

}  // namespace

bool Trace::is_known_kind(const std::string& kind) {
  return steps().count(kind) != 0;
}

void Trace::apply(Schedule& sch) const {
  std::map<std::pair<OperandKind, int64_t>, int> ids;
  for (size_t i = 0; i < instructions_.size(); ++i) {
    const Instruction& inst = instructions_[i];
    auto step = steps().find(inst.kind);
    if (step == steps().end()) {
      throw std::invalid_argument("trace instruction " + std::to_string(i) + ": unknown kind " + inst.kind);
    }
    Replayer r(sch, inst, i, ids);
    size_t before = sch.trace().size();
    step->second(r);
    if (sch.trace().size() != before + 1) r.malformed("the replay appended no instruction");
    r.map_outputs();
  }
}

}  // namespace tessel::sched
