//===- CostReportOf.h - The cost report as `ampc cost` builds it -*- C++ -*-===//
//
// Shared by `ampc cost` and `ampc compile --cost-report`: on the CUDA target
// the fused kernels carry the names the emitted file gives them (regions of
// the same text share one kernel), so each row names what ncu will show.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_CLI_COSTREPORTOF_H
#define AMPC_COMPILER_CLI_COSTREPORTOF_H

#include "compiler/cost/CostReport.h"

namespace ampc::cli {

mlir::FailureOr<cost::CostReport>
costReportOf(mlir::ModuleOp module, cost::Target target,
             const cost::DeviceSpec &device,
             const cost::DataParallelSpec &dp = {});

} // namespace ampc::cli

#endif // AMPC_COMPILER_CLI_COSTREPORTOF_H
