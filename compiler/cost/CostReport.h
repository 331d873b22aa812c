//===- CostReport.h - Per-kernel cost of one training step ------*- C++ -*-===//
//
// Reads a module after the training pipeline (kernel level, memory plan)
// and lists every launch of one optimizer step in order: @m_grad's body
// once per micro-batch with each gradient's hand-over (storeGrad) after
// the op that finishes it, the loss, the data-parallel all-reduce of one
// rank when there are several, and the fused epilogue. Each row gets a
// roofline time on one device of the table. The report reads the IR; it
// changes nothing.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_COST_COSTREPORT_H
#define AMPC_COMPILER_COST_COSTREPORT_H

#include "compiler/cost/CostModel.h"
#include "compiler/cost/DeviceTable.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <string>

namespace ampc::cost {

// What limits a launch: device memory, arithmetic, or the interconnect.
enum class Bound { Memory, Compute, Link };
llvm::StringRef boundName(Bound bound);

struct Row {
  Launch launch;
  // Per launch: max(bytes / bandwidth, flops / peak, link time), where a
  // collective's link time is its latency plus its link bytes at its
  // protocol's bandwidth, under the device's fastest protocol for it.
  double seconds = 0;
  Bound bound = Bound::Memory;
  llvm::StringRef protocol;  // a collective's; empty otherwise
  double linkLatencySeconds = 0; // the latency part of its link time
};

struct Totals {
  int64_t launches = 0, kernels = 0, copies = 0;
  int64_t misalignedGemms = 0; // launches (Launch::misaligned)
  double bytesRead = 0, bytesWritten = 0, flops = 0, linkBytes = 0;
  double seconds = 0, memorySeconds = 0, computeSeconds = 0, linkSeconds = 0;
};

// Data parallelism as the training binary runs it under `mpirun -np N`
// (runtime/train/DataParallel.cpp, the flags of the same names).
struct DataParallelSpec {
  int64_t worldSize = 1;
  // FP32 gradient bytes per bucket, as rt::bucketBytesOfMb makes them.
  size_t bucketBytes = size_t(25) << 20;
  std::string reduceDtype = "fp32";    // fp16, bf16: the CPU target only
  bool overlap = true; // buckets start during the last micro-batch's backward
};

// The all-reduce of one rank's step, and how much of it the backward can
// hide (CUDA target with overlap: each bucket starts on the communication
// stream once its gradients are final and the bucket before it is done).
struct BucketCost {
  // Its staging copies and collective [firstRow, endRow), and its
  // unpacking copies [unpackRow, unpackEndRow): GradBucketer::finish()
  // queues every bucket's after the last collective.
  int64_t firstRow = 0, endRow = 0, unpackRow = 0, unpackEndRow = 0;
  int64_t pieces = 0;               // gradient pieces (GradBucketer segments)
  double elements = 0, bytes = 0;  // on the wire (--reduce-dtype)
  bool staged = false; // packed into a staging buffer and back
  // The row after which all its gradients are final in the last
  // micro-batch (the backward's last row without the overlap), and when it
  // is ready, starts and ends on the communication stream.
  int64_t readyAfterRow = 0;
  double readySeconds = 0, startSeconds = 0, endSeconds = 0;
};

struct DataParallelCost {
  int64_t worldSize = 1;
  std::vector<BucketCost> bucketCosts;
  int64_t buckets() const { return int64_t(bucketCosts.size()); }
  int64_t stagedBuckets() const {
    return llvm::count_if(bucketCosts,
                          [](const BucketCost &c) { return c.staged; });
  }
  // (The bytes this rank sends are the totals' link bytes.)
  double collectiveSeconds = 0; // the all-reduce rows, packing included
  double backwardSeconds = 0;   // the micro-batches' rows, all of them
  double overlappedSeconds = 0; // the step's floor with the overlap
  bool overlap = false;         // false: the rows run after the backward
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
  DataParallelCost dataParallel;
};

// Fails (with a diagnostic on the module) unless the module went through
// the training pipeline.
// |fusedKernelNames|: the kernel each fused region of @<model>_grad launches,
// in order, as the emitter names them (cudaFusedKernelNames); empty: fused_0,
// fused_1, ... in order.
// |dp|: one rank of a data-parallel run (worldSize 1: one process).
mlir::FailureOr<CostReport>
buildCostReport(mlir::ModuleOp module, Target target, const DeviceSpec &device,
                llvm::ArrayRef<std::string> fusedKernelNames = {},
                const DataParallelSpec &dp = {});

void printCostText(const CostReport &report, llvm::raw_ostream &os,
                   unsigned top = 10);
void printCostJson(const CostReport &report, llvm::raw_ostream &os,
                   unsigned top = 10);

// The device table, as text.
void printDeviceTable(llvm::raw_ostream &os);

} // namespace ampc::cost

#endif
