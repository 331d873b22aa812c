// The printed C++ compiles against the runtime headers (once the runtime
// and the kernel library are in the tree).
// RUN: ampc-opt %S/Inputs/net_grad.mlir \
// RUN:   --train-build-step="amp=fp16 loss-scale=dynamic clip-norm=1.0 optimizer=adamw" \
// RUN:   --train-fuse-epilogue --cse --kernel-fuse-elementwise --kernel-plan-memory \
// RUN:   | ampc-translate --ampc-emit-cpu -o %t.adamw.cpp
// RUN: c++ -std=c++20 -fsyntax-only -Wall -Werror -I%src %t.adamw.cpp
// RUN: ampc-opt %S/Inputs/net_grad.mlir \
// RUN:   --train-build-step="optimizer=sgd nesterov=true loss-scale=none clip-value=0.5" \
// RUN:   --train-fuse-epilogue --kernel-fuse-elementwise --kernel-plan-memory \
// RUN:   | ampc-translate --ampc-emit-cpu -o %t.sgd.cpp
// RUN: c++ -std=c++20 -fsyntax-only -Wall -Werror -I%src %t.sgd.cpp
