//===- TrainOps.h - The training-step dialect -------------------*- C++ -*-===//
#ifndef AMPC_DIALECTS_TRAIN_TRAINOPS_H
#define AMPC_DIALECTS_TRAIN_TRAINOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Train/TrainDialect.h.inc"

#define GET_OP_CLASSES
#include "dialects/Train/TrainOps.h.inc"

#endif
