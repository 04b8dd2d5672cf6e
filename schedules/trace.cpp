// Trace as JSON (nlohmann_json, kept out of trace.h) and decision mutation.
// Malformed text is rejected with std::invalid_argument naming the place.
#include "schedules/trace.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace tessel::sched {

using nlohmann::json;

namespace {

constexpr int kTraceVersion = 1;

const char* kind_key(OperandKind kind) {
  switch (kind) {
    case OperandKind::kLoop: return "loop";
    case OperandKind::kBlock: return "block";
    case OperandKind::kInt: return "int";
    case OperandKind::kConst: return "const";
  }
  return "?";
}

[[noreturn]] void malformed(const std::string& where, const std::string& why) {
  throw std::invalid_argument("malformed trace JSON: " + where + ": " + why);
}

json operand_to_json(const Operand& op) {
  return json::array({kind_key(op.kind), op.value});
}

Operand operand_from_json(const json& j, const std::string& where) {
  if (!j.is_array() || j.size() != 2 || !j[0].is_string() || !j[1].is_number_integer()) {
    malformed(where, "an operand is [\"loop\"|\"block\"|\"int\"|\"const\", integer], not " + j.dump());
  }
  std::string key = j[0].get<std::string>();
  for (OperandKind kind : {OperandKind::kLoop, OperandKind::kBlock, OperandKind::kInt, OperandKind::kConst}) {
    if (key != kind_key(kind)) continue;
    int64_t value = j[1].get<int64_t>();
    if (kind != OperandKind::kConst && (value < 0 || value > INT32_MAX))
      malformed(where, "bad handle id " + j.dump());
    return {kind, value};
  }
  malformed(where, "unknown operand kind \"" + key + "\"");
}

json attr_to_json(const AttrValue& value) {
  return std::visit([](const auto& v) { return json(v); }, value);
}

AttrValue attr_from_json(const json& j, const std::string& where) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_string()) return j.get<std::string>();
  if (!j.is_array()) malformed(where, "an attribute is an integer, a string or an array of numbers");
  bool all_integers = true;
  for (const json& x : j) {
    if (!x.is_number()) malformed(where, "an attribute array holds numbers only");
    all_integers = all_integers && x.is_number_integer();
  }
  if (all_integers) return j.get<std::vector<int64_t>>();
  return j.get<std::vector<double>>();
}

std::vector<Operand> operands_from_json(const json& j, const std::string& where) {
  if (!j.is_array()) malformed(where, "expected an array of operands");
  std::vector<Operand> out;
  for (size_t i = 0; i < j.size(); ++i)
    out.push_back(operand_from_json(j[i], where + "[" + std::to_string(i) + "]"));
  return out;
}

Instruction instruction_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) malformed(where, "an instruction is an object");
  for (const auto& [key, value] : j.items()) {
    if (key != "kind" && key != "inputs" && key != "attrs" && key != "outputs" && key != "decision")
      malformed(where, "unknown field \"" + key + "\"");
  }
  if (!j.contains("kind") || !j["kind"].is_string()) malformed(where, "missing string field \"kind\"");
  Instruction inst;
  inst.kind = j["kind"].get<std::string>();
  if (!Trace::is_known_kind(inst.kind)) malformed(where, "unknown instruction kind \"" + inst.kind + "\"");
  std::string at = where + " (" + inst.kind + ")";
  if (!j.contains("inputs") || !j.contains("outputs")) malformed(at, "needs \"inputs\" and \"outputs\"");
  inst.inputs = operands_from_json(j["inputs"], at + ".inputs");
  inst.outputs = operands_from_json(j["outputs"], at + ".outputs");
  if (j.contains("attrs")) {
    if (!j["attrs"].is_object()) malformed(at, "\"attrs\" is an object");
    for (const auto& [key, value] : j["attrs"].items())
      inst.attrs[key] = attr_from_json(value, at + ".attrs." + key);
  }
  if (j.contains("decision")) {
    const json& d = j["decision"];
    bool ok = d.is_array();
    for (const json& x : d) ok = ok && x.is_number_integer();
    if (!ok) malformed(at, "\"decision\" is an array of integers");
    inst.decision = d.get<std::vector<int64_t>>();
  }
  return inst;
}

}  // namespace

std::string Trace::to_json() const {
  json instructions = json::array();
  for (const Instruction& inst : instructions_) {
    json j = {{"kind", inst.kind},
              {"inputs", json::array()},
              {"attrs", json::object()},
              {"outputs", json::array()}};
    for (const Operand& op : inst.inputs) j["inputs"].push_back(operand_to_json(op));
    for (const Operand& op : inst.outputs) j["outputs"].push_back(operand_to_json(op));
    for (const auto& [key, value] : inst.attrs) j["attrs"][key] = attr_to_json(value);
    if (inst.decision) j["decision"] = *inst.decision;
    instructions.push_back(std::move(j));
  }
  return json{{"version", kTraceVersion}, {"instructions", std::move(instructions)}}.dump();
}

Trace Trace::from_json(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) malformed("text", "not valid JSON");
  if (!j.is_object() || !j.contains("version") || !j.contains("instructions"))
    malformed("top level", "expected an object with \"version\" and \"instructions\"");
  if (!j["version"].is_number_integer() || j["version"].get<int64_t>() != kTraceVersion)
    malformed("version", "expected " + std::to_string(kTraceVersion) + ", got " + j["version"].dump());
  if (!j["instructions"].is_array()) malformed("instructions", "expected an array");
  Trace trace;
  const json& list = j["instructions"];
  for (size_t i = 0; i < list.size(); ++i) {
    trace.append(instruction_from_json(list[i], "instruction " + std::to_string(i)));
  }
  return trace;
}

Trace Trace::with_decision(size_t index, std::vector<int64_t> decision) const {
  if (index >= instructions_.size()) {
    throw std::invalid_argument("with_decision: instruction " + std::to_string(index) + " of a trace of " +
                                std::to_string(instructions_.size()));
  }
  if (!instructions_[index].decision) {
    throw std::invalid_argument("with_decision: instruction " + std::to_string(index) + " (" +
                                instructions_[index].kind + ") is not a sampling instruction");
  }
  Trace out = *this;
  out.instructions_[index].decision = std::move(decision);
  return out;
}

}  // namespace tessel::sched
