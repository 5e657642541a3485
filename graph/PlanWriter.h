// The private interface of kernel generation (graph/KernelGen.cpp, graph/KernelGenForms.cpp):
// the writer of one graph's host plan and kernel source, and the helpers that write Tessera
// source. Not included outside graph/.
#pragma once

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "basic/Diagnostics.h"
#include "graph/Graph.h"
#include "graph/GraphDiagnostics.h"
#include "graph/HostPlan.h"

namespace tessera::graph::kernelgen {

std::string literal(double v);
Shape planShape(const Type& t);
std::string splice(const std::string& expr, const std::vector<std::string>& terms);

// One generated kernel: its parameters in order and its body, written as Tessera source.
class KernelText {
 public:
  explicit KernelText(std::string name) : name_(std::move(name)) {}
  // A tensor parameter with the given extents (symbols of this kernel or constants).
  std::string tensor(const std::string& name, DType d, const std::vector<std::string>& extents, bool mut = false) {
    std::string p = name + ": " + (mut ? "mut " : "") + dtypeName(d) + "[";
    for (size_t i = 0; i < extents.size(); ++i) p += (i ? ", " : "") + extents[i];
    params_.push_back(p + "]");
    return name;
  }
  void scalar(const std::string& name, DType d) { params_.push_back(name + ": " + dtypeName(d)); }
  void line(int indent, const std::string& text) { body_ += std::string(4 * indent, ' ') + text + "\n"; }
  std::string str() const {
    std::string s = "@kernel\ndef " + name_ + "(";
    for (size_t i = 0; i < params_.size(); ++i) s += (i ? ", " : "") + params_[i];
    return s + "):\n" + body_ + "\n";
  }

 private:
  std::string name_;
  std::vector<std::string> params_;
  std::string body_;
};

void decomposeIndex(KernelText& k, const std::vector<std::string>& d);
std::string indexList(size_t rank, size_t skip = 0);
void safeInvRms(KernelText& k, int at, const std::string& row, const std::string& dt, double epsValue);

class PlanWriter {
 public:
  PlanWriter(const Graph& g, std::string& source, DiagnosticEngine& diags) : g_(g), source_(source), diags_(diags) {}

  bool run(HostPlan& plan) {
    plan_.name = g_.name;
    plan_.captureGraph = g_.attrs.getBool(AttrId::CaptureGraph, false);
    for (size_t i = 0; i < g_.params.size(); ++i) {
      const Param& p = g_.params[i];
      plan_.params.push_back({p.value->name, p.value->type.isTensor(), p.value->type.dtype, p.value->type.shape,
                              p.access != Access::Read});
      if (p.value->type.isTensor())
        buffers_[p.value.get()] = {PlanBuffer::Kind::Param, static_cast<unsigned>(i)};
      else
        scalarParams_[p.value.get()] = static_cast<unsigned>(i);
    }
    for (const Value* r : g_.results) {
      if (!r->type.isTensor()) return refuse(nullptr, "it returns a scalar, which entry points do not return yet");
      plan_.outputs.push_back({r->type.dtype, planShape(r->type)});
    }
    claimed_.assign(g_.results.size(), false);
    for (const auto& n : g_.nodes)
      if (!node(*n)) return false;
    for (size_t i = 0; i < g_.results.size(); ++i)
      if (!claimed_[i] && !copyResult(i)) return false;
    if (!symbolsBound()) return false;
    plan_.signature = signature();
    plan = std::move(plan_);
    return true;
  }

 private:
  bool refuse(const Node* n, const std::string& why) {
    diags_.report(diag::warn_graph_no_entry, n ? n->loc : g_.loc) << g_.name << why;
    return false;
  }
  static bool supportedDType(DType d) {
    return d == DType::FP32 || d == DType::FP64 || d == DType::BF16 || d == DType::FP16;
  }

  // <function>__k<step>_<op>, spelled as a Tessera identifier whatever the graph's name is.
  std::string nextKernel(const char* what) {
    std::string name = g_.name + "__k" + std::to_string(plan_.steps.size()) + "_" + what;
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    return std::isdigit(static_cast<unsigned char>(name[0])) ? "_" + name : name;
  }
  // The buffer of a node result: the caller's result when the graph returns it (the first
  // result that names it); the caller's tensor when plan-memory stores it in place; the slot
  // plan-memory gave it ({buffers}); else a temporary of its own.
  PlanBuffer allocate(const Value* v) {
    for (size_t i = 0; i < g_.results.size(); ++i)
      if (g_.results[i] == v && !claimed_[i]) {
        claimed_[i] = true;
        return buffers_[v] = {PlanBuffer::Kind::Output, static_cast<unsigned>(i)};
      }
    if (v->users.size() == 1 && v->users[0]->is(OpId::Store) && v->users[0]->attrs.getBool(AttrId::InPlace, false))
      return buffers_[v] = buffers_.at(v->users[0]->operands[0]);
    int64_t slot = -1;
    if (const Attr* b = v->def ? v->def->attrs.get(AttrId::Buffers) : nullptr)
      if (b->isList() && v->index < b->asList().size() && b->asList()[v->index].isInt())
        slot = b->asList()[v->index].asInt();
    if (slot >= 0 && slots_.count(slot) && plan_.temps[slots_[slot]].dtype == v->type.dtype &&
        plan_.temps[slots_[slot]].shape == planShape(v->type))
      return buffers_[v] = {PlanBuffer::Kind::Temp, slots_[slot]};
    plan_.temps.push_back({v->type.dtype, planShape(v->type)});
    unsigned t = static_cast<unsigned>(plan_.temps.size() - 1);
    if (slot >= 0) slots_[slot] = t;
    return buffers_[v] = {PlanBuffer::Kind::Temp, t};
  }
  PlanArg tensorArg(const Value* v, Shape view = {}) { return PlanArg::tensor(buffers_.at(v), std::move(view)); }
  // A temporary of v's type of its own (no plan-memory slot).
  PlanBuffer freshTemp(const Value* v) {
    plan_.temps.push_back({v->type.dtype, planShape(v->type)});
    return buffers_[v] = {PlanBuffer::Kind::Temp, static_cast<unsigned>(plan_.temps.size() - 1)};
  }

  // The extents of what the entry point allocates must follow from its parameters' shapes.
  bool symbolsBound() {
    std::set<std::string> bound, used;
    for (const PlanParam& p : plan_.params)
      for (const Dim& d : p.shape)
        if (d.isSymbol()) bound.insert(d.name());
    for (const auto* list : {&plan_.outputs, &plan_.temps})
      for (const PlanTensor& t : *list)
        for (const Dim& d : t.shape) d.collectSymbols(used);
    for (const PlanStep& s : plan_.steps)
      for (const PlanArg& a : s.args) {
        if (a.kind == PlanArg::Kind::Extent || (a.kind == PlanArg::Kind::Float && a.invSqrt))
          a.extent.collectSymbols(used);
        for (const Dim& d : a.view) d.collectSymbols(used);
      }
    for (const std::string& s : used)
      if (!bound.count(s))
        return refuse(nullptr,
                      "extent '" + s + "' is not the extent of a parameter, so a call cannot size its results");
    return true;
  }
  std::string signature() const {
    std::string s = g_.name + "(";
    for (size_t i = 0; i < g_.params.size(); ++i) {
      const Param& p = g_.params[i];
      s += (i ? ", " : "") + p.value->name + ": " +
           (p.access != Access::Read ? std::string(accessName(p.access)) + " " : "") + p.value->type.str();
    }
    s += ") -> (";
    for (size_t i = 0; i < g_.results.size(); ++i) s += (i ? ", " : "") + g_.results[i]->type.str();
    return s + ")";
  }
  bool node(const Node& n);
  bool elementwise(const Node* n, const std::string& label, const std::vector<std::string>& steps,
                   const std::vector<const Value*>& operands, const Value* out, PlanBuffer outBuffer);
  bool matmul(const Node& n);
  bool rows(const Node& n);
  bool stdlibRowsNode(const Node& n);
  PlanBuffer filledTemp(DType d, const Dim& extent, double value);
  bool attention(const Node& n);
  bool stdlibAttention(const Node& n);
  bool stdlibAttentionFits(const Node& n) const;
  bool referenceAttention(const Node& n, const std::string& name);
  bool attentionGrad(const Node& n);
  PlanArg attentionScaleArg(const Node& n, const Dim& Dh);
  bool concat(const Node& n);
  const Node* concatOfGradients(const Node& n) const;
  PlanArg headView(const Value* x, int64_t heads);
  bool attentionTakesHeads(const Node& split, int64_t heads) const;
  PlanStep stdlibStep(const std::string& kernel) {
    usesStdlibNN_ = true;
    return {"_tessera_nn_" + kernel, {}, kernel};
  }
  bool rowsGrad(const Node& n);
  bool rmsnormGrad(const Node& n);
  bool rmsnormWeightGrad(const Node& n, const std::string& dt, double eps);
  static constexpr int64_t kDwRows = 32;  // rows per partial sum of a norm weight's gradient
  bool sumTo(const Node& n);
  bool reduce(const Node& n);
  bool transpose(const Node& n);
  bool split(const Node& n);
  bool reshape(const Node& n);
  bool copyResult(size_t i);

  const Graph& g_;
  std::string& source_;
  DiagnosticEngine& diags_;
  HostPlan plan_;
  std::map<const Value*, PlanBuffer> buffers_;
  std::map<const Value*, unsigned> scalarParams_;
  std::map<int64_t, unsigned> slots_;  // plan-memory's slots -> temporaries
  std::vector<bool> claimed_;
  bool usesStdlibNN_ = false;
  // Results of split_qkv that are column ranges of its operand (no copy): the operand's buffer,
  // the first column and the operand's row length.
  struct Columns {
    PlanBuffer buffer;
    Dim first, rowLength;
  };
  std::map<const Value*, Columns> columns_;
  std::set<const Node*> viewConcats_;  // concats whose operands were written into their result
  std::map<std::tuple<DType, std::string, double>, PlanBuffer> fills_;  // filledTemp's vectors

 public:
  bool usesStdlibNN() const { return usesStdlibNN_; }
};

}  // namespace tessera::graph::kernelgen
