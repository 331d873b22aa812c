// RUN: ampc-opt %s --split-input-file --graph-verify-model --verify-diagnostics | FileCheck %s

// CHECK-LABEL: graph.model @one
graph.model @one {
  %w = graph.param "w" init(#graph.zeros) : tensor<f32>
  graph.output loss = %w : tensor<f32>
}

// -----

graph.model @a {
  %w = graph.param "w" init(#graph.zeros) : tensor<f32>
  graph.output loss = %w : tensor<f32>
}
// expected-error @+1 {{a model file holds one graph.model}}
graph.model @b {
  %w = graph.param "w" init(#graph.zeros) : tensor<f32>
  graph.output loss = %w : tensor<f32>
}

// -----

// expected-error @+1 {{no graph.model in this file}}
module {
  func.func @f() {
    return
  }
}

// -----

// Nothing to train: `ampc check` rejects it as `ampc compile` would.
// expected-error @+1 {{model @noparam has no parameters: there is nothing to train (declare one with graph.param)}}
graph.model @noparam {
  %l = graph.input "l" : tensor<f32>
  graph.output loss = %l : tensor<f32>
}
