// Verifier errors of matmul/batch_matmul with transpose flags: the flags
// decide which axes contract and the result shape.
// RUN: ampc-opt %s --split-input-file --verify-diagnostics

graph.model @lhs_flag_mismatch {
  %a = graph.input "a" : tensor<4x8xf32>
  %b = graph.input "b" : tensor<8x16xf32>
  // expected-error @+2 {{matmul contraction mismatch: [4, 8] (transposed) x [8, 16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %c = graph.matmul %a, %b {lhs_transposed} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %l = graph.reduce_sum %c : tensor<8x16xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @rhs_flag_wrong_result {
  %a = graph.input "a" : tensor<2x4x8xf32>
  %b = graph.input "b" : tensor<2x16x8xf32>
  // expected-error @+2 {{inferred type(s) 'tensor<2x4x16xf32>' are incompatible with return type(s) of operation 'tensor<2x4x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %c = graph.batch_matmul %a, %b {rhs_transposed} : tensor<2x4x8xf32>, tensor<2x16x8xf32> -> tensor<2x4x8xf32>
  %l = graph.reduce_sum %c : tensor<2x4x8xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
