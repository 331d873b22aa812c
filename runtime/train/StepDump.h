//===- StepDump.h - --dump-step: one step's numbers, for checking -*- C++ -*-===//
//
// Wraps a Model so that the first optimizer step of the run is written to a
// safetensors file: the batch, the state before the step, the gradients the
// epilogue received, and the state after. The end-to-end tests feed the same
// batch and weights to the reference interpreter and compare. The wrapper
// only observes; the wrapped model computes exactly what it would unwrapped.
//
// File contents (every tensor F32; integer and half inputs converted exactly):
//   input.NAME    the batch of input NAME (micro-batch 0; all micro-batches
//                 as input.NAME.K when accumulating, K = 0..accum-1)
//   before.STATE  every stateTensors() entry before the step
//   grad.PARAM    the gradient buffers step() received: summed over
//                 micro-batches (and ranks), of the loss times the loss scale
//   after.STATE   every stateTensors() entry after the step
// and in __metadata__ (numbers printed with %.9g, exact for floats): the
// compile config, every Hyper field the step ran with as hyper.NAME
// (runtime/HyperParams.def; hyper.lr after the
// schedule), seed, iteration, grad_divisor, loss_sum (the loss accumulator),
// the StepStats (loss, grad_norm, clip_coef, skipped, scale_used), the
// scaler and optimizer step before and after.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TRAIN_STEPDUMP_H
#define AMPC_RUNTIME_TRAIN_STEPDUMP_H

#include "runtime/Model.h"

#include <map>
#include <memory>
#include <string>

namespace ampc::rt {

// Returns a Model that forwards every call to |inner| and writes |path| at
// the end of the first step() call.
std::unique_ptr<Model> makeStepDumper(Model &inner, std::string path);

} // namespace ampc::rt

#endif
