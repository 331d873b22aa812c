// nll_loss, binary_cross_entropy_with_logits, cross_entropy with probability
// labels, argmax, gather and cumsum (test/e2e/Inputs/mlp_nll.mlir) compiled
// for the CUDA target: the printed CUDA compiles with nvcc against the
// runtime headers.
// REQUIRES: nvcc
// RUN: ampc compile %S/../../e2e/Inputs/mlp_nll.mlir --target=cuda --amp=fp16 --emit=cpp -o %t.cu
// RUN: %nvcc -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -I%src -c %t.cu -o %t.o
