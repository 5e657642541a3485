// Random well-typed kernels for exec_fuzz: the fuzzer's input bytes are a stream of choices that
// a small grammar turns into one `@kernel` (plus helper functions) over a fixed parameter list:
// one input tensor of every scalar dtype below (two of f32 and i32), one `mut` output of each,
// two outputs that only integer atomics update (deterministic: add into one, max into the
// other), and two scalars. Every tile handles element i of the outputs; indices are always in range
// (`i`, `n - 1 - i`, `e % n` for a signed integer e, ...), so a bounds fault is a bug. Locals
// keep one type; names are never reused, and locals of a nested block are not used after it.
// Past the end of the input every choice is 0, the simplest alternative, so every input makes a
// complete kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::fuzz {

class Choices {
 public:
  Choices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  unsigned pick(unsigned n) { return n <= 1 ? 0 : byte() % n; }
  bool percent(unsigned p) { return pick(100) < p; }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | byte();
    return v;
  }

 private:
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// The scalar dtypes of the generated kernels. `dtype` is the runtime's tessera_dtype number.
enum class Ty { F32, F64, F16, BF16, I64, I32, I16, I8, U32, U8, Count };

struct TyInfo {
  const char* name;
  int32_t dtype;
  unsigned bytes;
  bool isFloat, isSigned;
};

inline const TyInfo& info(Ty t) {
  static const TyInfo table[] = {
      {"f32", 2, 4, true, true},   {"f64", 1, 8, true, true},   {"f16", 3, 2, true, true},
      {"bf16", 4, 2, true, true},  {"i64", 14, 8, false, true}, {"i32", 13, 4, false, true},
      {"i16", 12, 2, false, true}, {"i8", 11, 1, false, true},  {"u32", 17, 4, false, false},
      {"u8", 15, 1, false, false},
  };
  return table[static_cast<int>(t)];
}

constexpr int kTyCount = static_cast<int>(Ty::Count);

// A tensor parameter of the generated kernel, in declaration order.
struct TensorParam {
  std::string name;
  Ty ty;
  bool isOutput;
};

struct GeneratedKernel {
  std::string source;
  std::vector<TensorParam> tensors;  // then the scalars s_f32: f32, s_i32: i32
};

// The parameter list every generated kernel has (so the launch function has one C signature).
inline std::vector<TensorParam> kernelTensors() {
  std::vector<TensorParam> ps;
  for (int t = 0; t < kTyCount; ++t) ps.push_back({std::string("a_") + info(Ty(t)).name, Ty(t), false});
  ps.push_back({"b_f32", Ty::F32, false});
  ps.push_back({"b_i32", Ty::I32, false});
  for (int t = 0; t < kTyCount; ++t) ps.push_back({std::string("o_") + info(Ty(t)).name, Ty(t), true});
  // Outputs that only atomics update (add into x_i64, max into x_u32): the same memory in any
  // order, so -O0 and -O2 must agree on them bit for bit too.
  ps.push_back({"x_i64", Ty::I64, true});
  ps.push_back({"x_u32", Ty::U32, true});
  return ps;
}
constexpr size_t kTensorParams = 2 * kTyCount + 4;

class KernelGenerator {
 public:
  explicit KernelGenerator(Choices& c) : c_(c) {}

  GeneratedKernel generate() {
    GeneratedKernel g;
    g.tensors = kernelTensors();
    unsigned helpers = c_.pick(3);
    for (unsigned h = 0; h < helpers; ++h) helper(h);
    out_ += "@kernel\ndef k(";
    for (const TensorParam& p : g.tensors)
      out_ += p.name + ": " + (p.isOutput ? "mut " : "") + info(p.ty).name + "[n], ";
    out_ += "s_f32: f32, s_i32: i32):\n";
    out_ += "    i = tile.linear_id()\n    if i < n:\n";
    inKernel_ = true;
    scopes_.assign(1, {});
    scopes_.back().push_back({"s_f32", Ty::F32});
    scopes_.back().push_back({"s_i32", Ty::I32});
    scopes_.back().push_back({"i", Ty::I32});
    block(2, 3);
    // Every output gets a value at the end (earlier stores may already have written it).
    for (int t = 0; t < kTyCount; ++t) line(2, std::string("o_") + info(Ty(t)).name + "[i] = " + expr(Ty(t), 3));
    g.source = out_;
    return g;
  }

 private:
  struct Local {
    std::string name;
    Ty ty;
  };
  struct Helper {
    std::string name;
    std::vector<Ty> params;
    Ty result;
  };

  Ty anyTy() { return Ty(c_.pick(kTyCount)); }
  Ty intTy() { return Ty(static_cast<int>(Ty::I64) + c_.pick(kTyCount - static_cast<int>(Ty::I64))); }
  Ty floatTy() { return Ty(c_.pick(4)); }

  void line(int indent, const std::string& s) { out_ += std::string(4 * indent, ' ') + s + "\n"; }

  std::vector<const Local*> localsOf(Ty t) const {
    std::vector<const Local*> r;
    for (const auto& s : scopes_)
      for (const Local& l : s)
        if (l.ty == t) r.push_back(&l);
    return r;
  }

  // A helper function of 1 to 3 scalar parameters, returning one scalar: a few statements and a
  // return, maybe an early one. It may call the helpers before it (never itself).
  void helper(unsigned index) {
    Helper h{"h" + std::to_string(index), {}, anyTy()};
    unsigned params = 1 + c_.pick(3);
    for (unsigned p = 0; p < params; ++p) h.params.push_back(anyTy());
    std::string sig = "def " + h.name + "(";
    scopes_.assign(1, {});
    for (unsigned p = 0; p < params; ++p) {
      std::string pn = "p" + std::to_string(p);
      sig += (p ? ", " : "") + pn + ": " + info(h.params[p]).name;
      scopes_.back().push_back({pn, h.params[p]});
    }
    out_ += sig + ") -> " + info(h.result).name + ":\n";
    inKernel_ = false;
    returnTy_ = h.result;
    block(1, 2);
    line(1, "return " + expr(h.result, 3));
    out_ += "\n";
    helpers_.push_back(h);
  }

  // 1 to `most` statements at `indent`; `depth` bounds the nesting of blocks.
  void block(int indent, int depth) {
    unsigned n = 1 + c_.pick(4);
    for (unsigned s = 0; s < n; ++s) statement(indent, depth);
  }

  void nested(int indent, int depth) {
    scopes_.emplace_back();
    block(indent, depth);
    scopes_.pop_back();
  }

  std::string cond(int depth) {
    switch (c_.pick(depth > 0 ? 5 : 1)) {
      case 1: return "(not " + cond(depth - 1) + ")";
      case 2: return "(" + cond(depth - 1) + " and " + cond(depth - 1) + ")";
      case 3: return "(" + cond(depth - 1) + " or " + cond(depth - 1) + ")";
      default: {
        static const char* ops[] = {"<", "<=", ">", ">=", "==", "!="};
        Ty t = anyTy();
        return "(" + expr(t, depth) + " " + ops[c_.pick(6)] + " " + expr(t, depth) + ")";
      }
    }
  }

  void newLocal(int indent) {
    Ty t = anyTy();
    std::string name = "v" + std::to_string(nextLocal_++);
    line(indent, name + " = " + expr(t, 3));
    scopes_.back().push_back({name, t});
  }

  void statement(int indent, int depth) {
    unsigned kind = c_.pick(depth > 0 ? 8 : 3);
    switch (kind) {
      case 0: return newLocal(indent);
      case 1: {  // assign to a local of this block or an enclosing one (same type)
        std::vector<const Local*> vs;
        for (const auto& sc : scopes_)
          for (const Local& l : sc)
            if (l.name[0] == 'v') vs.push_back(&l);
        if (vs.empty()) return newLocal(indent);
        const Local* l = vs[c_.pick(vs.size())];
        line(indent, l->name + " = " + expr(l->ty, 3));
        return;
      }
      case 2: {  // a store into an output (kernel) or an early return (helper)
        if (!inKernel_) {
          if (indent > 1) line(indent, "return " + expr(returnTy_, 2));
          return;
        }
        if (c_.percent(25)) {  // an atomic update at any index, its old value discarded
          bool add = c_.percent(50);
          Ty t = add ? Ty::I64 : Ty::U32;
          line(indent,
               std::string(add ? "atomic_add(x_i64[" : "atomic_max(x_u32[") + index(2) + "], " + expr(t, 2) + ")");
          return;
        }
        Ty t = anyTy();
        line(indent, std::string("o_") + info(t).name + "[i] = " + expr(t, 3));
        return;
      }
      case 3:
      case 4: {  // if / elif / else
        line(indent, "if " + cond(2) + ":");
        nested(indent + 1, depth - 1);
        if (c_.percent(40)) {
          line(indent, "elif " + cond(2) + ":");
          nested(indent + 1, depth - 1);
        }
        if (c_.percent(50)) {
          line(indent, "else:");
          nested(indent + 1, depth - 1);
        }
        return;
      }
      case 5:
      case 6: {  // a counted loop with constant bounds (possibly empty, possibly downwards)
        std::string j = "j" + std::to_string(nextLocal_++);
        int start = static_cast<int>(c_.pick(9)) - 4, stop = static_cast<int>(c_.pick(13)) - 4;
        int step = c_.percent(70) ? 1 + static_cast<int>(c_.pick(3)) : -1 - static_cast<int>(c_.pick(2));
        line(indent, "for " + j + " in range(" + std::to_string(start) + ", " + std::to_string(stop) + ", " +
                         std::to_string(step) + "):");
        scopes_.emplace_back();
        scopes_.back().push_back({j, Ty::I32});
        block(indent + 1, depth - 1);
        scopes_.pop_back();
        return;
      }
      default: {  // an accumulation into an existing local
        auto ls = localsOf(Ty::F32);
        std::vector<const Local*> vs;
        for (const Local* l : ls)
          if (l->name[0] == 'v') vs.push_back(l);
        if (vs.empty()) return newLocal(indent);
        const Local* l = vs[c_.pick(vs.size())];
        line(indent, l->name + " += " + expr(Ty::F32, 2));
        return;
      }
    }
  }

  // An index of a tensor of n elements, always in [0, n).
  std::string index(int depth) {
    switch (c_.pick(depth > 0 ? 6 : 3)) {
      case 1: return "(n - 1 - i)";
      case 2: return "((i + " + std::to_string(c_.pick(1000)) + ") % n)";
      case 3: return "min(i + " + std::to_string(c_.pick(64)) + ", n - 1)";
      case 4:
      case 5: {
        static const Ty signedInts[] = {Ty::I64, Ty::I32, Ty::I16, Ty::I8};
        return "(" + expr(signedInts[c_.pick(4)], depth - 1) + " % n)";
      }
      default: return "i";
    }
  }

  std::string literal(Ty t) {
    const TyInfo& ti = info(t);
    if (ti.isFloat) {
      static const char* fs[] = {"0.0", "1.0", "-1.0",  "0.5",  "2.0",  "-2.5",
                                 "3.0", "0.1", "100.0", "-0.0", "1e-3", "65504.0"};
      return std::string(ti.name) + "(" + fs[c_.pick(12)] + ")";
    }
    static const long long is[] = {0, 1, -1, 2, 3, 7, -8, 31, 64, 127, -128, 255};
    long long v = is[c_.pick(12)];
    if (!ti.isSigned && v < 0) v = -v;
    if (t == Ty::I8 && v > 127) v = 127;
    return std::string(ti.name) + "(" + std::to_string(v) + ")";
  }

  std::string leaf(Ty t) {
    const TyInfo& ti = info(t);
    switch (c_.pick(5)) {
      case 0: return literal(t);
      case 1:
      case 2: {
        auto ls = localsOf(t);
        if (!ls.empty()) return ls[c_.pick(ls.size())]->name;
        break;
      }
      default: break;
    }
    if (!inKernel_) {
      auto ls = localsOf(t);
      return ls.empty() ? literal(t) : ls[c_.pick(ls.size())]->name;
    }
    std::string tensor = std::string(c_.percent(30) && (t == Ty::F32 || t == Ty::I32) ? "b_" : "a_") + ti.name;
    return tensor + "[" + index(1) + "]";
  }

  std::string call(Ty t, int depth) {
    std::vector<const Helper*> hs;
    for (const Helper& h : helpers_)
      if (h.result == t) hs.push_back(&h);
    if (hs.empty()) return leaf(t);
    const Helper* h = hs[c_.pick(hs.size())];
    std::string s = h->name + "(";
    for (size_t p = 0; p < h->params.size(); ++p) s += (p ? ", " : "") + expr(h->params[p], depth - 1);
    return s + ")";
  }

  std::string unary(Ty t, int depth) {
    const TyInfo& ti = info(t);
    std::string a = expr(t, depth - 1);
    if (ti.isFloat && (t == Ty::F32 || t == Ty::F64)) {
      static const char* fs[] = {"exp", "exp2", "log", "log2",  "sqrt", "rsqrt", "tanh",
                                 "erf", "sin",  "cos", "floor", "ceil", "abs"};
      unsigned k = c_.pick(15);
      if (k < 13) return std::string(fs[k]) + "(" + a + ")";
      return "(-" + a + ")";
    }
    if (c_.percent(50)) return "abs(" + a + ")";
    return ti.isSigned ? "(-" + a + ")" : "abs(" + a + ")";
  }

  std::string binary(Ty t, int depth) {
    const TyInfo& ti = info(t);
    std::string a = expr(t, depth - 1), b = expr(t, depth - 1);
    if (ti.isFloat) {
      switch (c_.pick(9)) {
        case 0: return "(" + a + " + " + b + ")";
        case 1: return "(" + a + " - " + b + ")";
        case 2: return "(" + a + " * " + b + ")";
        case 3: return "(" + a + " / " + b + ")";
        case 4: return "min(" + a + ", " + b + ")";
        case 5: return "max(" + a + ", " + b + ")";
        case 6: return "fma(" + a + ", " + b + ", " + expr(t, depth - 1) + ")";
        case 7: return (t == Ty::F32 || t == Ty::F64) ? "pow(" + a + ", " + b + ")" : "(" + a + " * " + b + ")";
        default: return "(" + a + " + " + b + " * " + expr(t, depth - 1) + ")";
      }
    }
    static const char* ops[] = {"+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^"};
    unsigned k = c_.pick(12);
    if (k == 10) return "min(" + a + ", " + b + ")";
    if (k == 11) return "max(" + a + ", " + b + ")";
    return "(" + a + " " + ops[k] + " " + b + ")";
  }

  std::string expr(Ty t, int depth) {
    if (depth <= 0) return leaf(t);
    switch (c_.pick(10)) {
      case 0:
      case 1: return leaf(t);
      case 2: return unary(t, depth);
      case 3:
      case 4:
      case 5: return binary(t, depth);
      case 6: {  // a conversion from another dtype (explicit: every narrowing needs one)
        Ty from = anyTy();
        return std::string(info(t).name) + "(" + expr(from, depth - 1) + ")";
      }
      case 7: return "(" + expr(t, depth - 1) + " if " + cond(1) + " else " + expr(t, depth - 1) + ")";
      case 8: return call(t, depth);
      default:
        // Integer division producing f32, and integer literals next to a typed operand.
        if (t == Ty::F32 && c_.percent(50))
          return "(" + expr(Ty::I32, depth - 1) + " / " + expr(Ty::I32, depth - 1) + ")";
        if (!info(t).isFloat) return "(" + expr(t, depth - 1) + " + " + std::to_string(c_.pick(100)) + ")";
        return "(" + expr(t, depth - 1) + " * 2.0)";
    }
  }

  Choices& c_;
  std::string out_;
  std::vector<std::vector<Local>> scopes_;
  std::vector<Helper> helpers_;
  bool inKernel_ = false;
  Ty returnTy_ = Ty::F32;
  unsigned nextLocal_ = 0;
};

}  // namespace tessera::fuzz
