//===- RuntimeDemo.cpp - The test model as a training binary -------------===//
//
// What a generated binary looks like, with the hand-written model; used by
// the --help and Python safetensors checks.
//
//===----------------------------------------------------------------------===//
#include "test/unit/TestModel.h"

int main(int argc, char **argv) {
  ampc::test::SoftmaxClassifier model;
  return ampc::rt::trainMain(argc, argv, model);
}
