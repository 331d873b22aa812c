//===- CostReport.h - Per-kernel cost of one training step ------*- C++ -*-===//
//
// Reads a module after the training pipeline (kernel level, memory plan)
// and lists every launch of one optimizer step in order: @m_grad's body
// once per micro-batch, the loss and gradient hand-over of DeviceModel, and
// the fused epilogue. Each row gets a roofline time on one device of the
// table. The report reads the IR; it changes nothing.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_COST_COSTREPORT_H
#define AMPC_COMPILER_COST_COSTREPORT_H

#include "compiler/cost/CostModel.h"
#include "compiler/cost/DeviceTable.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace ampc::cost {

struct Row {
  Launch launch;
  double seconds = 0; // per launch: max(bytes / bandwidth, flops / peak)
  bool memoryBound = true;
};

struct Totals {
  int64_t launches = 0, kernels = 0, copies = 0;
  int64_t misalignedGemms = 0; // launches (Launch::misaligned)
  double bytesRead = 0, bytesWritten = 0, flops = 0;
  double seconds = 0, memorySeconds = 0, computeSeconds = 0;
};

struct CostReport {
  std::string model, amp, optimizer;
  int64_t accumSteps = 1, parameters = 0;
  // @m_grad's memory plan (kernel-plan-memory): the arena, and what it
  // would be without reusing buffers.
  int64_t arenaBytes = 0, arenaBytesNoReuse = 0;
  Target target = Target::Cuda;
  const DeviceSpec *device = nullptr;
  std::vector<Row> rows; // step order
  Totals totals;         // every row times its count
};

// Fails (with a diagnostic on the module) unless the module went through
// the training pipeline.
// |fusedKernelNames|: the kernel each fused region of @<model>_grad launches,
// in order, as the emitter names them (cudaFusedKernelNames); empty: fused_0,
// fused_1, ... in order.
mlir::FailureOr<CostReport>
buildCostReport(mlir::ModuleOp module, Target target, const DeviceSpec &device,
                llvm::ArrayRef<std::string> fusedKernelNames = {});

void printCostText(const CostReport &report, llvm::raw_ostream &os,
                   unsigned top = 10);
void printCostJson(const CostReport &report, llvm::raw_ostream &os,
                   unsigned top = 10);

// The device table, as text.
void printDeviceTable(llvm::raw_ostream &os);

} // namespace ampc::cost

#endif
