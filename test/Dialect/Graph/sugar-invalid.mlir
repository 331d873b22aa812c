// Verifier errors of squeeze, unsqueeze, expand and broadcasting matmuls.
// RUN: ampc-opt %s --split-input-file --verify-diagnostics

func.func @squeeze_result(%x: tensor<4x1x8xf32>) {
  // expected-error @+1 {{'graph.squeeze' op result must be [4, 8] for input [4, 1, 8], got [4, 1, 8]}}
  %0 = graph.squeeze %x : tensor<4x1x8xf32> -> tensor<4x1x8xf32>
  return
}

// -----

func.func @squeeze_axis(%x: tensor<4x1x8xf32>) {
  // expected-error @+1 {{'graph.squeeze' op axis 3 is out of range for a tensor of rank 3}}
  %0 = graph.squeeze %x {axes = array<i64: 3>} : tensor<4x1x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @unsqueeze_result(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'graph.unsqueeze' op result must be [4, 8, 1] for input [4, 8], got [4, 1, 8]}}
  %0 = graph.unsqueeze %x {axes = array<i64: -1>} : tensor<4x8xf32> -> tensor<4x1x8xf32>
  return
}

// -----

func.func @unsqueeze_twice(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'graph.unsqueeze' op axis -4 is listed twice}}
  %0 = graph.unsqueeze %x {axes = array<i64: 0, -4>} : tensor<4x8xf32> -> tensor<1x1x4x8xf32>
  return
}

// -----

func.func @expand_shape(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{'graph.expand' op cannot expand [4, 2] to [3, 4, 8] (a dimension must match or be 1)}}
  %0 = graph.expand %x : tensor<4x2xf32> -> tensor<3x4x8xf32>
  return
}

// -----

func.func @expand_type(%x: tensor<4x1xf32>) {
  // expected-error @+1 {{'graph.expand' op changes the element type 'f32' -> 'f16'; use graph.cast}}
  %0 = graph.expand %x : tensor<4x1xf32> -> tensor<4x8xf16>
  return
}

// -----

func.func @batch_not_broadcast(%a: tensor<2x4x8xf32>, %b: tensor<3x8x5xf32>) {
  // expected-error @+2 {{batch_matmul batch dimensions do not broadcast: [2, 4, 8] x [3, 8, 5]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<3x8x5xf32> -> tensor<2x4x5xf32>
  return
}

// -----

func.func @matmul_rank1(%a: tensor<8xf32>, %b: tensor<8x5xf32>) {
  // expected-error @+2 {{matmul needs operands of rank >= 2, got [8] and [8, 5]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %a, %b : tensor<8xf32>, tensor<8x5xf32> -> tensor<5xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<2x4x8xf32>, %b: tensor<7x5xf32>) {
  // expected-error @+2 {{matmul contraction mismatch: [2, 4, 8] x [7, 5]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %a, %b : tensor<2x4x8xf32>, tensor<7x5xf32> -> tensor<2x4x5xf32>
  return
}
