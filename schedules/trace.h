// Trace: the instructions a Schedule applied (lookups, primitives, samples with
// their decisions), as plain data. It serialises to JSON, replays on a fresh
// Schedule of the same function, and lets the tuner swap one decision.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tessel::sched {

class Schedule;

// Handles a Schedule hands out. The id indexes the Schedule's table of that
// kind; it means nothing in another Schedule (a replay remaps it).
struct LoopRV {
  int id = -1;
};
struct BlockRV {
  int id = -1;
};
// A sampled integer.
struct IntRV {
  int id = -1;
};

// A split factor: a constant or a sampled integer.
struct Factor {
  Factor(int64_t constant) : constant(constant) {}  // NOLINT(google-explicit-constructor)
  Factor(int constant) : constant(constant) {}      // NOLINT(google-explicit-constructor)
  Factor(IntRV rv) : rv(rv) {}                      // NOLINT(google-explicit-constructor)
  bool is_rv() const { return rv.id >= 0; }
  int64_t constant = 0;
  IntRV rv;
};

// One input or output of an instruction: a handle of some kind, by id, or an
// integer constant (a constant split factor).
enum class OperandKind : uint8_t { kLoop, kBlock, kInt, kConst };
struct Operand {
  OperandKind kind;
  int64_t value;  // the handle id, or the constant
  bool operator==(const Operand&) const = default;
};
inline Operand operand(LoopRV rv) {
  return {OperandKind::kLoop, rv.id};
}
inline Operand operand(BlockRV rv) {
  return {OperandKind::kBlock, rv.id};
}
inline Operand operand(IntRV rv) {
  return {OperandKind::kInt, rv.id};
}
inline Operand operand(const Factor& f) {
  return f.is_rv() ? operand(f.rv) : Operand{OperandKind::kConst, f.constant};
}

using AttrValue = std::variant<int64_t, std::string, std::vector<int64_t>, std::vector<double>>;
using Attrs = std::map<std::string, AttrValue>;

// kind is the Schedule method's name ("split", "sample_perfect_tile", ...).
// A sampling instruction carries its decision: the factors of a perfect
// tile, or the one chosen index of a categorical or compute-location sample.
struct Instruction {
  std::string kind;
  std::vector<Operand> inputs;
  Attrs attrs;
  std::vector<Operand> outputs;
  std::optional<std::vector<int64_t>> decision;
  bool operator==(const Instruction&) const = default;
};

class Trace {
 public:
  const std::vector<Instruction>& instructions() const { return instructions_; }
  size_t size() const { return instructions_.size(); }
  void append(Instruction inst) { instructions_.push_back(std::move(inst)); }

  // Compact JSON: {"version":1,"instructions":[{"kind":...,"inputs":[["loop",0],...],
  // "attrs":{...},"outputs":[...],"decision":[...]}]}. from_json(to_json()) is
  // the same trace; malformed text throws std::invalid_argument saying where.
  std::string to_json() const;
  static Trace from_json(const std::string& text);

  // Replays every instruction on `sch` (a fresh Schedule of a freshly
  // lowered function), remapping handle ids; sampling instructions reuse
  // their decisions. Throws ScheduleError when a step is illegal there, and
  // std::invalid_argument for instructions that do not fit together (wrong
  // operands or attributes, a handle no earlier instruction made); `sch` then
  // holds the instructions before the failing one.
  void apply(Schedule& sch) const;

  // The trace with instruction `index` (a sampling instruction) deciding
  // `decision` instead; throws std::invalid_argument when index is not one.
  // Whether the decision is legal is found out by apply.
  Trace with_decision(size_t index, std::vector<int64_t> decision) const;

  // Whether apply knows instructions of this kind.
  static bool is_known_kind(const std::string& kind);

  bool operator==(const Trace&) const = default;

 private:
  std::vector<Instruction> instructions_;
};

}  // namespace tessel::sched
