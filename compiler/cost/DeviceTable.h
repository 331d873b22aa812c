//===- DeviceTable.h - Peak numbers of the devices the cost report knows -*- C++ -*-===//
//
// The one table of device peaks the roofline uses: memory bandwidth and
// throughput per precision, each row with the document it comes from. Dense
// numbers only (no structured sparsity); FP32 GEMMs run without TF32 (the
// runtime asks cuBLASLt for FP32 compute), so FP32 work uses the CUDA-core
// FP32 peak.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_COST_DEVICETABLE_H
#define AMPC_COMPILER_COST_DEVICETABLE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace ampc::cost {

// One way a collective can move its bytes, as an alpha-beta model: a ring
// all-reduce of W ranks takes base + 2 (W-1) x step seconds of latency plus
// its link bytes at the protocol's bus bandwidth. The report prices each
// collective under the fastest protocol, as NCCL's tuner chooses one.
struct LinkProtocol {
  llvm::StringRef name;   // "LL", "LL128", "Simple"; "MPI" on the CPU
  double baseSeconds;     // per collective
  double stepSeconds;     // per ring step
  double bytesPerSecond;  // bus bandwidth each way under this protocol
};

struct DeviceSpec {
  llvm::StringRef name;       // --device=NAME
  llvm::StringRef target;     // the --target it models: "cuda" or "cpu"
  llvm::StringRef description;
  double bytesPerSecond;      // peak device-memory bandwidth
  double fp32FlopsPerSecond;  // non-tensor FP32 (elementwise, FP32 GEMMs)
  double halfFlopsPerSecond;  // dense FP16/BF16 tensor-core, FP32 accumulate
  // Interconnect bandwidth each way per device (NVLink; MPI's bus bandwidth
  // on the CPU): what a ring all-reduce's bus bandwidth can reach.
  double linkBytesPerSecond;
  // How collectives use the link (at least one; none faster than the link).
  llvm::ArrayRef<LinkProtocol> linkProtocols;
  llvm::StringRef source;     // where the numbers come from
};

llvm::ArrayRef<DeviceSpec> deviceTable();

// The row named |name|, or null.
const DeviceSpec *findDevice(llvm::StringRef name);

// "h100, h200, a100, cpu-2core": the known names, for error messages.
std::string knownDevices();

} // namespace ampc::cost

#endif
