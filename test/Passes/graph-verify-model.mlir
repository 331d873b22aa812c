// RUN: ampc-opt %s --split-input-file --graph-verify-model --verify-diagnostics | FileCheck %s

// CHECK-LABEL: graph.model @one
graph.model @one {
  %l = graph.input "l" : tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

graph.model @a {
  %l = graph.input "l" : tensor<f32>
  graph.output loss = %l : tensor<f32>
}
// expected-error @+1 {{a model file holds one graph.model}}
graph.model @b {
  %l = graph.input "l" : tensor<f32>
  graph.output loss = %l : tensor<f32>
}

// -----

// expected-error @+1 {{no graph.model in this file}}
module {
  func.func @f() {
    return
  }
}
