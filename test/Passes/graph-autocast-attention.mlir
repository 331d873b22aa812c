// Autocast of scaled_dot_product_attention's masks: an additive float mask
// is cast to the half type with q, k and v (PyTorch casts attn_mask with
// the lower-list op's other floating arguments); an integer keep-mask is
// never cast. Grouped-query k and v keep their own shapes.
// RUN: ampc-opt %s --split-input-file --graph-autocast | FileCheck %s
// RUN: ampc-opt %s --split-input-file --graph-autocast=mode=bf16 | FileCheck %s --check-prefix=BF16

// CHECK-LABEL: graph.model @masks
// CHECK-DAG:   %[[B:.*]] = graph.cast %{{.*}} : tensor<4x6xf32> -> tensor<4x6xf16>
// CHECK:       graph.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} mask %[[B]] {amp.precision = "fp16", amp.rule = "lower-list (attention)"} : tensor<1x4x4x8xf16>, tensor<1x2x6x8xf16>, tensor<1x2x6x8xf16>, tensor<4x6xf16> -> tensor<1x4x4x8xf16>
// CHECK:       graph.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {amp.precision = "fp16", amp.rule = "lower-list (attention)", causal} : tensor<1x4x4x8xf16>, tensor<1x2x6x8xf16>, tensor<1x2x6x8xf16>, tensor<1x1x1x6xi64> -> tensor<1x4x4x8xf16>
// BF16-LABEL: graph.model @masks
// BF16:       graph.scaled_dot_product_attention {{.*}} : tensor<1x4x4x8xbf16>, tensor<1x2x6x8xbf16>, tensor<1x2x6x8xbf16>, tensor<4x6xbf16> -> tensor<1x4x4x8xbf16>
// BF16:       graph.scaled_dot_product_attention {{.*}} : tensor<1x4x4x8xbf16>, tensor<1x2x6x8xbf16>, tensor<1x2x6x8xbf16>, tensor<1x1x1x6xi64> -> tensor<1x4x4x8xbf16>
graph.model @masks {
  %q = graph.input "q" : tensor<1x4x4x8xf32>
  %keep = graph.input "keep" : tensor<1x1x1x6xi64>
  %k = graph.param "k" init(#graph.zeros) : tensor<1x2x6x8xf32>
  %bias = graph.param "bias" init(#graph.zeros) : tensor<4x6xf32>
  %a = graph.scaled_dot_product_attention %q, %k, %k mask %bias : tensor<1x4x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<4x6xf32> -> tensor<1x4x4x8xf32>
  %b = graph.scaled_dot_product_attention %q, %k, %k mask %keep {causal} : tensor<1x4x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x1x1x6xi64> -> tensor<1x4x4x8xf32>
  %s = graph.add %a, %b : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32> -> tensor<1x4x4x8xf32>
  %l = graph.reduce_sum %s : tensor<1x4x4x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
