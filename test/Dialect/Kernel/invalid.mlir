// Verifier errors of the kernel dialect, one per case.
// RUN: ampc-opt %s --split-input-file --verify-diagnostics

func.func @argument_count(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{needs one region argument per input}}
  %r = kernel.fused_elementwise ins(%x, %y : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %n = graph.neg %a : tensor<4xf32>
    kernel.yield %n : tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @argument_type(%x: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @below {{region argument types must match the inputs}}
  %r = kernel.fused_elementwise ins(%x : tensor<4xf16>) {
  ^bb0(%a: tensor<4xf32>):
    %n = graph.neg %a : tensor<4xf32>
    kernel.yield %n : tensor<4xf32>
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @no_result(%x: tensor<4xf32>) {
  // expected-error @below {{needs at least one result}}
  "kernel.fused_elementwise"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    "kernel.yield"() : () -> ()
  }) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @result_shapes(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xf32>) {
  // expected-error @below {{results must share one shape}}
  %r:2 = kernel.fused_elementwise ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %n = graph.neg %a : tensor<4xf32>
    kernel.yield %n, %n : tensor<4xf32>, tensor<4xf32>
  } -> tensor<4xf32>, tensor<2x2xf32>
  return %r#0, %r#1 : tensor<4xf32>, tensor<2x2xf32>
}

// -----

// An input the loop cannot index with broadcasting, even an unused one.
func.func @input_shape(%x: tensor<5xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @below {{input 0 ('tensor<5xf32>') does not broadcast to the loop's shape}}
  %r = kernel.fused_elementwise ins(%x, %y : tensor<5xf32>, tensor<4x8xf32>) {
  ^bb0(%a: tensor<5xf32>, %b: tensor<4x8xf32>):
    %n = graph.relu %b : tensor<4x8xf32>
    kernel.yield %n : tensor<4x8xf32>
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @input_rank(%x: tensor<4x8xf32>, %y: tensor<2x4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @below {{input 1 ('tensor<2x4x8xf32>') does not broadcast to the loop's shape}}
  %r = kernel.fused_elementwise ins(%x, %y : tensor<4x8xf32>, tensor<2x4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<2x4x8xf32>):
    %n = graph.relu %a : tensor<4x8xf32>
    kernel.yield %n : tensor<4x8xf32>
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @yield_types(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @below {{yielded types must match the result types}}
  %r = kernel.fused_elementwise ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %n = graph.neg %a : tensor<4xf32>
    kernel.yield %n : tensor<4xf32>
  } -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// -----

func.func @yield_count(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @below {{yielded types must match the result types}}
  %r:2 = kernel.fused_elementwise ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %n = graph.neg %a : tensor<4xf32>
    kernel.yield %n : tensor<4xf32>
  } -> tensor<4xf32>, tensor<4xf32>
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @not_elementwise(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %r = kernel.fused_elementwise ins(%x : tensor<2x8xf32>) {
  ^bb0(%a: tensor<2x8xf32>):
    // expected-error @below {{'graph.softmax' op is not an elementwise op a loop can fuse}}
    %s = graph.softmax %a {axis = -1} : tensor<2x8xf32>
    kernel.yield %s : tensor<2x8xf32>
  } -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

func.func @inner_shape(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = kernel.fused_elementwise ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
    // expected-error @below {{'graph.relu' op must produce the loop's shape}}
    %n = graph.relu %c : tensor<8xf32>
    %s = graph.add %a, %n : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    kernel.yield %s : tensor<4x8xf32>
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// The body is checked (here: it has no kernel.yield) before the loop's
// verifier reads it.
func.func @terminator(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = "kernel.fused_elementwise"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    // expected-error @below {{block with no terminator}}
    %n = "graph.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @yield_outside(%x: tensor<4xf32>) {
  // expected-error @below {{expects parent op 'kernel.fused_elementwise'}}
  kernel.yield %x : tensor<4xf32>
}

// -----

func.func @add_layer_norm_half_sum(%r: tensor<4x32xf32>, %d: tensor<4x32xbf16>) -> tensor<4x32xbf16> {
  // expected-error @below {{sum must be f32}}
  %s, %y = kernel.add_layer_norm %r, %d : tensor<4x32xf32>, tensor<4x32xbf16> -> tensor<4x32xbf16>, tensor<4x32xbf16>
  return %y : tensor<4x32xbf16>
}

// -----

func.func @add_layer_norm_shapes(%r: tensor<4x32xf32>, %d: tensor<32xf32>) -> tensor<4x32xf32> {
  // expected-error @below {{rhs must be a float tensor of the input's shape}}
  %s, %y = kernel.add_layer_norm %r, %d : tensor<4x32xf32>, tensor<32xf32> -> tensor<4x32xf32>, tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

func.func @add_layer_norm_weight(%r: tensor<4x32xf32>, %w: tensor<16xf32>) -> tensor<4x32xf32> {
  // expected-error @below {{weight must be a [32] float tensor}}
  %s, %y = kernel.add_layer_norm %r, %r, %w : tensor<4x32xf32>, tensor<4x32xf32>, tensor<16xf32> -> tensor<4x32xf32>, tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

func.func @add_layer_norm_eps(%r: tensor<4x32xf32>) -> tensor<4x32xf32> {
  // expected-error @below {{eps must be > 0}}
  %s, %y = kernel.add_layer_norm %r, %r {eps = 0.0} : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

func.func @backward_add_half_sum(%x: tensor<4x32xf32>, %w: tensor<32xf32>) -> tensor<4x32xbf16> {
  // expected-error @below {{dx_sum must be f32}}
  %dx, %dw, %db = kernel.layer_norm_backward_add %x, %w, %x, %x : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xbf16>, tensor<32xf32>, tensor<32xf32>
  return %dx : tensor<4x32xbf16>
}

// -----

func.func @backward_add_f32_copy(%x: tensor<4x32xf32>, %w: tensor<32xf32>) -> tensor<4x32xf32> {
  // expected-error @below {{dx_half must be f16 or bf16}}
  %dx, %dw, %db, %h = kernel.layer_norm_backward_add %x, %w, %x, %x : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<4x32xf32>
  return %h : tensor<4x32xf32>
}

// -----

func.func @backward_add_acc_shape(%x: tensor<4x32xf32>, %w: tensor<32xf32>, %acc: tensor<8x32xf32>) -> tensor<4x32xf32> {
  // expected-error @below {{acc must be a float tensor of the input's shape}}
  %dx, %dw, %db = kernel.layer_norm_backward_add %x, %w, %x, %acc : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32>, tensor<8x32xf32> -> tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>
  return %dx : tensor<4x32xf32>
}

// -----

func.func @add_rms_norm_half_sum(%r: tensor<4x32xf32>) -> tensor<4x32xbf16> {
  // expected-error @below {{sum must be f32}}
  %s, %y = kernel.add_rms_norm %r, %r : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xbf16>, tensor<4x32xbf16>
  return %y : tensor<4x32xbf16>
}

// -----

func.func @rms_backward_add_dweight(%x: tensor<4x32xf32>, %w: tensor<32xf32>) -> tensor<4x32xf32> {
  // expected-error @below {{dweight must be a [32] float tensor}}
  %dx, %dw = kernel.rms_norm_backward_add %x, %w, %x, %x : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>, tensor<16xf32>
  return %dx : tensor<4x32xf32>
}
