//===- Signature.cpp - Comparing what the ranks passed --------------------------------------===//
#include "runtime/dist/Signature.h"

#include <cstring>
#include <functional>
#include <map>
#include <vector>

#include "runtime/Status.h"

namespace tessera::dist {

using rt::concat;
using rt::fail;

const char* opKindName(OpKind k) {
  static const char* names[] = {"all_reduce",
                                "all_gather",
                                "reduce_scatter",
                                "broadcast",
                                "all_to_all",
                                "send/recv",
                                "barrier",
                                "comm_split",
                                "mesh_create",
                                "dtensor_create",
                                "all_gather (overlapped)",
                                "reduce_scatter (overlapped)"};
  int i = static_cast<int>(k);
  return i >= 0 && i < static_cast<int>(OpKind::Count) ? names[i] : "an unknown operation";
}

Signature makeSignature(OpKind kind, const char* name, int32_t dtype, int32_t rank, const int64_t* shape) {
  Signature s;
  s.kind = static_cast<int32_t>(kind);
  s.dtype = dtype;
  s.rank = rank;
  for (int32_t d = 0; d < rank && d < TESSERA_MAX_RANK; ++d) s.shape[d] = shape[d];
  std::strncpy(s.name, name ? name : "", sizeof s.name - 1);
  return s;
}

std::string typeString(int32_t dtype, int32_t rank, const int64_t* shape) {
  std::string s = concat(tessera_dtype_name(dtype), "[");
  for (int32_t d = 0; d < rank && d < TESSERA_MAX_RANK; ++d) s += concat(d ? ", " : "", shape[d]);
  return s + "]";
}

namespace {

// "ranks 0, 1 and 3" / "rank 2"
std::string rankList(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) s += concat(i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ", ranks[i]);
  return s;
}

// Groups the ranks by a property of their signatures; "ranks 0 and 1 pass X; rank 2 passes Y".
std::string describeGroups(const std::vector<Signature>& all, const std::vector<int>& rankIds,
                           const std::function<std::string(const Signature&)>& key, const char* one, const char* many) {
  std::map<std::string, std::vector<int>> groups;
  std::vector<std::string> order;
  for (size_t r = 0; r < all.size(); ++r) {
    std::string k = key(all[r]);
    if (!groups.count(k)) order.push_back(k);
    groups[k].push_back(rankIds[r]);
  }
  std::string s;
  for (const std::string& k : order) {
    const std::vector<int>& ranks = groups[k];
    s += concat(s.empty() ? "" : "; ", rankList(ranks), " ", ranks.size() == 1 ? one : many, " ", k);
  }
  return s;
}

std::string nameOf(const Signature& s) { return std::string(s.name, strnlen(s.name, sizeof s.name)); }

// all[i] is the signature of rank rankIds[i].
tessera_status compare(const std::vector<Signature>& all, const std::vector<int>& rankIds, const std::string& what,
                       const std::string& where) {
  const Signature& first = all[0];
  auto differs = [&](const std::function<std::string(const Signature&)>& key) {
    for (const Signature& s : all)
      if (key(s) != key(first)) return true;
    return false;
  };
  auto callOf = [](const Signature& s) {
    return concat(opKindName(static_cast<OpKind>(s.kind)), " of '", nameOf(s), "'");
  };
  auto kindOf = [](const Signature& s) { return std::string(opKindName(static_cast<OpKind>(s.kind))); };
  if (differs(kindOf))
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, what, " on ", where,
                ": the ranks call different collectives: ", describeGroups(all, rankIds, callOf, "calls", "call"),
                "; every rank must issue the same collectives in the same order");
  auto dtypeOf = [](const Signature& s) { return std::string(tessera_dtype_name(s.dtype)); };
  auto typeOf = [](const Signature& s) { return typeString(s.dtype, s.rank, s.shape); };
  if (differs(dtypeOf))
    return fail(TESSERA_ERROR_DTYPE_MISMATCH, what, " on ", where,
                ": the ranks disagree on the dtype: ", describeGroups(all, rankIds, typeOf, "passes", "pass"));
  if (differs(typeOf))
    return fail(TESSERA_ERROR_SHAPE_MISMATCH, what, " on ", where,
                ": the ranks disagree on the shape: ", describeGroups(all, rankIds, typeOf, "passes", "pass"));
  auto layoutOf = [](const Signature& s) { return std::string(s.layout, strnlen(s.layout, sizeof s.layout)); };
  if (differs(layoutOf))
    return fail(TESSERA_ERROR_SHAPE_MISMATCH, what, " on ", where,
                ": the ranks disagree on the layout: ", describeGroups(all, rankIds, layoutOf, "passes", "pass"));
  auto paramsOf = [](const Signature& s) {
    return concat("(", s.param[0], ", ", s.param[1], ", ", s.param[2], ", ", s.param[3], ")");
  };
  if (differs(paramsOf))
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, what, " on ", where,
                ": the ranks disagree on the operation's parameters (reduction, root, order, flags): ",
                describeGroups(all, rankIds, paramsOf, "passes", "pass"));
  if (differs(nameOf))
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, what, " on ", where, ": the ranks name different tensors: ",
                describeGroups(
                    all, rankIds, [&](const Signature& s) { return concat("'", nameOf(s), "'"); }, "passes", "pass"),
                "; every rank must issue the same collectives in the same order");
  return TESSERA_SUCCESS;
}

}  // namespace

tessera_status agreeOver(Bootstrap& boot, const Signature& mine, const std::string& what, const std::string& where,
                         const Deadline& d) {
  std::vector<Signature> all(boot.size());
  if (tessera_status st = boot.allGather(&mine, sizeof mine, all.data(), d); st != TESSERA_SUCCESS)
    return fail(st, what, " on ", where, ": ", tessera_last_error_message());
  std::vector<int> ids(all.size());
  for (size_t r = 0; r < ids.size(); ++r) ids[r] = static_cast<int>(r);
  return compare(all, ids, what, where);
}

tessera_status agree(tessera_comm_t& c, const Signature& mine, const std::string& what) {
  TESSERA_TRY(c.live());
  if (!c.checkSignatures || c.size() == 1) return TESSERA_SUCCESS;
  tessera_status st = agreeOver(c.transport->bootstrap(), mine, what, c.where(), Deadline::after(c.timeout));
  if (st == TESSERA_ERROR_TIMEOUT || st == TESSERA_ERROR_COMM_ABORTED) {
    std::string msg = concat(tessera_last_error_message(), "; the communicator is aborted");
    c.abort(st, msg);
    return fail(st, msg);
  }
  return st;
}

tessera_status agreePair(tessera_comm_t& c, int peer, const Signature& mine, const std::string& what) {
  TESSERA_TRY(c.live());
  if (!c.checkSignatures) return TESSERA_SUCCESS;
  Signature theirs;
  tessera_status st = c.transport->bootstrap().exchange(peer, &mine, &theirs, sizeof mine, Deadline::after(c.timeout));
  if (st != TESSERA_SUCCESS) {
    std::string msg = concat(what, " on ", c.where(), ": ", tessera_last_error_message());
    if (st == TESSERA_ERROR_TIMEOUT || st == TESSERA_ERROR_COMM_ABORTED) {
      msg += "; the communicator is aborted";
      c.abort(st, msg);
    }
    return fail(st, msg);
  }
  return compare({mine, theirs}, {c.rank(), peer}, what, c.where());
}

}  // namespace tessera::dist
