// scaled_dot_product_attention with grouped-query heads and masks (and its
// backward) parses, verifies, prints and parses again (custom and generic
// forms); the existing form without a mask prints as before.
// RUN: ampc-opt %s --split-input-file | ampc-opt --split-input-file | FileCheck %s
// RUN: ampc-opt %s --split-input-file --mlir-print-op-generic | ampc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: graph.model @gqa_masks
graph.model @gqa_masks {
  %q = graph.input "q" : tensor<2x8x16x8xf16>
  %k = graph.input "k" : tensor<2x2x12x8xf16>
  %v = graph.input "v" : tensor<2x2x12x6xf16>
  %keep = graph.input "keep" : tensor<2x1x16x12xi64>
  %bias = graph.input "bias" : tensor<12xf16>
  // CHECK: graph.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x16x8xf16>, tensor<2x2x12x8xf16>, tensor<2x2x12x6xf16> -> tensor<2x8x16x6xf16>
  %a = graph.scaled_dot_product_attention %q, %k, %v : tensor<2x8x16x8xf16>, tensor<2x2x12x8xf16>, tensor<2x2x12x6xf16> -> tensor<2x8x16x6xf16>
  // CHECK: graph.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {causal} : tensor<2x8x16x8xf16>, tensor<2x2x12x8xf16>, tensor<2x2x12x6xf16>, tensor<2x1x16x12xi64> -> tensor<2x8x16x6xf16>
  %b = graph.scaled_dot_product_attention %q, %k, %v mask %keep {causal} : tensor<2x8x16x8xf16>, tensor<2x2x12x8xf16>, tensor<2x2x12x6xf16>, tensor<2x1x16x12xi64> -> tensor<2x8x16x6xf16>
  // CHECK: graph.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {scale = 2.500000e-01 : f64} : tensor<2x8x16x8xf16>, tensor<2x2x12x8xf16>, tensor<2x2x12x6xf16>, tensor<12xf16> -> tensor<2x8x16x6xf16>
  %c = graph.scaled_dot_product_attention %q, %k, %v mask %bias {scale = 0.25} : tensor<2x8x16x8xf16>, tensor<2x2x12x8xf16>, tensor<2x2x12x6xf16>, tensor<12xf16> -> tensor<2x8x16x6xf16>
  // CHECK: graph.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} {causal, dropout_p = 1.000000e-01 : f64} : tensor<2x8x16x8xf16>
  %d = graph.scaled_dot_product_attention %q, %k, %v {causal, dropout_p = 0.1} : tensor<2x8x16x8xf16>, tensor<2x2x12x8xf16>, tensor<2x2x12x6xf16> -> tensor<2x8x16x6xf16>
  %ab0 = graph.add %a, %d : tensor<2x8x16x6xf16>, tensor<2x8x16x6xf16> -> tensor<2x8x16x6xf16>
  %ab = graph.add %ab0, %b : tensor<2x8x16x6xf16>, tensor<2x8x16x6xf16> -> tensor<2x8x16x6xf16>
  %abc = graph.add %ab, %c : tensor<2x8x16x6xf16>, tensor<2x8x16x6xf16> -> tensor<2x8x16x6xf16>
  %l = graph.reduce_sum %abc : tensor<2x8x16x6xf16> -> tensor<f16>
  graph.output loss = %l : tensor<f16>
}

// -----

// CHECK-LABEL: func.func @backward
func.func @backward(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x4xf32>, %g: tensor<1x4x3x4xf32>, %m: tensor<3x5xi32>) {
  // CHECK: graph.scaled_dot_product_attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {causal} : tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>, tensor<1x4x3x4xf32>, tensor<3x5xi32> -> tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>
  %0:3 = graph.scaled_dot_product_attention_backward %q, %k, %v, %g mask %m {causal} : tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>, tensor<1x4x3x4xf32>, tensor<3x5xi32> -> tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>
  return
}
