// The whole-kernel analyses of sema: rules over a checked function body (or the whole checked
// module) that the checker runs once it has typed every expression. They read the typed AST and
// the function infos of sema/Sema.h, never the checker's internals (sema/Checker.h), and report
// through the diagnostics engine.
#pragma once

#include "sema/Sema.h"

namespace tessera {

// Kernel-wide rules over a checked kernel body (KernelRules.cpp): uniformity of barriers and
// collectives, same-element store races.
void checkKernelUniformity(FunctionDefStmt* fn, FunctionInfo& info, DiagnosticEngine& diags);
// Stores that every group makes to one element, in deterministic kernels (GroupRaces.cpp).
void checkGroupRaces(FunctionDefStmt* fn, FunctionInfo& info, DiagnosticEngine& diags);
// A function declared to return a value whose body can end without a `return` (ReturnPaths.cpp).
void checkReturnPaths(FunctionDefStmt* fn, const FunctionInfo& info, DiagnosticEngine& diags);
// Call cycles reachable from a kernel (Recursion.cpp); runs once the whole module is checked.
void checkKernelRecursion(SemaContext& sc, DiagnosticEngine& diags);
// Shared-memory budget and the device limit (SharedMemory.cpp).
void checkSharedMemory(FunctionDefStmt* fn, FunctionInfo& info, DiagnosticEngine& diags);
// The rank of kernel parameters that do not write it, from their uses (ParamInference.cpp).
void inferKernelParams(FunctionDefStmt* fn, FunctionInfo& info, const SourceManager& sm, DiagnosticEngine& diags);
// The rules of code inlined into kernels, on every kernel and every function a kernel calls
// (DeviceCode.cpp): locals assigned on every path before their use (DefiniteAssignment.cpp),
// returns that the lowering can express (EarlyReturns.cpp), extents of views (ViewExtents.cpp).
void checkDeviceCode(SemaContext& sc, DiagnosticEngine& diags);
// Memory that deterministic code updates atomically is touched only by atomics of one commuting
// kind (AtomicAccess.cpp).
void checkAtomicAccess(SemaContext& sc, DiagnosticEngine& diags);
void checkDefiniteAssignment(const FunctionDefStmt* fn, DiagnosticEngine& diags);
void checkEarlyReturns(const FunctionDefStmt* fn, const FunctionInfo& info, DiagnosticEngine& diags);
// Views and copies into shared memory whose extents code generation must know (ViewExtents.cpp).
// Element and slice stores into a local that holds a computed tile value (TileValueStores.cpp).
void checkTileValueStores(const FunctionDefStmt* fn, DiagnosticEngine& diags);
void checkViewExtents(const FunctionDefStmt* fn, const FunctionInfo& info, const SemaContext& sc,
                      DiagnosticEngine& diags);
// Whole-tensor tile programs: rows of different blocks never meet, whole-rows values never meet
// a block (RowSplit.cpp, by basic/RowSplit.h's rules; the row-partition pass checks them again on
// the Tile IR, ir/passes/RowPartition.cpp).
void checkRowSplit(const FunctionDefStmt* fn, const FunctionInfo& info, DiagnosticEngine& diags);
// Every candidate of every autotune space other than the first, each analysed on its own
// (AutotuneCandidates.cpp); the first is the module's own analysis.
void checkAutotuneCandidates(Module& module, SemaContext& sc, DiagnosticEngine& diags);

}  // namespace tessera
