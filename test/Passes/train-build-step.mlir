// RUN: ampc-opt %s --split-input-file --verify-diagnostics \
// RUN:   --train-build-step="optimizer=adamw loss-scale=dynamic clip-norm=1.0 lr=0.01" \
// RUN:   | FileCheck %s
// RUN: ampc-opt %s --split-input-file --verify-diagnostics \
// RUN:   --train-build-step="optimizer=sgd loss-scale=static init-scale=1024 clip-value=0.5 nesterov=true accum-steps=4" \
// RUN:   | FileCheck %s --check-prefix=SGD
// RUN: not ampc-opt %s --split-input-file \
// RUN:   --train-build-step="optimizer=adamw loss-scale=none nesterov=true" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ERR-CONFIG

// The step of a two-parameter model: state and hyperparameters are
// arguments, new state and statistics are results, and clipping consumes
// the unscale op's results.

graph.model @m {
  %x = graph.input "x" : tensor<8x4xf32>
  %w = graph.param "w" init(#graph.zeros) : tensor<2x4xf32>
  %b = graph.param "b" init(#graph.zeros) : tensor<2xf32>
  %p = graph.linear %x, %w, %b : tensor<8x4xf32>, tensor<2x4xf32>, tensor<2xf32> -> tensor<8x2xf32>
  %l = graph.reduce_mean %p : tensor<8x2xf32> -> tensor<f32>
  graph.output loss = %l : tensor<f32>
}
func.func @m_grad(%x: tensor<8x4xf32> {graph.input = "x"},
                  %w: tensor<2x4xf32> {graph.param = "w"}, %b: tensor<2xf32> {graph.param = "b"},
                  %s: tensor<f32> {graph.loss_scale})
    -> (tensor<f32> {graph.output = "loss"}, tensor<2x4xf32> {graph.grad = "w"}, tensor<2xf32> {graph.grad = "b"}) {
  %l = graph.constant dense<0.0> : tensor<f32>
  %dw = graph.constant dense<1.0> : tensor<2x4xf32>
  %db = graph.constant dense<1.0> : tensor<2xf32>
  return %l, %dw, %db : tensor<f32>, tensor<2x4xf32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @m_step(
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x4xf32> {train.param = "w"}, %[[B:[^:]+]]: tensor<2xf32> {train.param = "b"},
// CHECK-SAME: %[[GW:[^:]+]]: tensor<2x4xf32> {train.grad = "w"}, %[[GB:[^:]+]]: tensor<2xf32> {train.grad = "b"},
// CHECK-SAME: {train.state = "w.exp_avg"}
// CHECK-SAME: {train.state = "b.exp_avg_sq"}
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {train.step_count}
// CHECK-SAME: %[[SCALE:[^:]+]]: tensor<f32> {train.scaler = "scale"}
// CHECK-SAME: %[[DIV:[^:]+]]: tensor<f32> {train.grad_divisor}
// CHECK-SAME: %[[LR:[^:]+]]: tensor<f32> {train.hyper = "lr"}
// CHECK-SAME: %[[CLIPNORM:[^:]+]]: tensor<f32> {train.hyper = "clip_norm"}
// CHECK-SAME: -> (tensor<2x4xf32> {train.param = "w"}
// CHECK-SAME: tensor<f32> {train.stat = "grad_norm"}, tensor<i1> {train.stat = "found_inf"}, tensor<f32> {train.stat = "clip_coef"})
// CHECK-SAME: train.config = #train.config<amp = "off", optimizer = "adamw", loss_scale = "dynamic", nesterov = false, clip_norm = true, clip_value = false, accum_steps = 1,
// CHECK-SAME: defaults = {clip_norm = 1.000000e+00 : f32, {{.*}}lr = 0.00999999977 : f32
// CHECK: %[[U:.*]]:2, %[[FOUND:.*]], %[[SUMSQ:.*]] = train.unscale %[[SCALE]], %[[DIV]] grads(%[[GW]], %[[GB]])
// CHECK: %[[NORM:.*]] = train.global_norm %[[SUMSQ]]
// CHECK: %[[COEF:.*]] = train.clip_coef %[[NORM]], %[[CLIPNORM]]
// CHECK: %[[CLIPPED:.*]]:2 = train.clip_by_norm %[[COEF]] grads(%[[U]]#0, %[[U]]#1)
// CHECK: %[[T:.*]] = train.advance_step %[[STEP]], %[[FOUND]]
// CHECK: train.adam %[[W]], %[[CLIPPED]]#0, {{.*}}, %[[T]], %[[FOUND]] lr(%[[LR]]) {{.*}} {decoupled} : tensor<2x4xf32>
// CHECK: train.adam %[[B]], %[[CLIPPED]]#1, {{.*}} {decoupled} : tensor<2xf32>
// CHECK: train.update_scale %[[SCALE]], {{.*}}, %[[FOUND]] {{.*}} {mode = "dynamic"}
// CHECK: return {{.*}}, %[[NORM]], %[[FOUND]], %[[COEF]] :

// The options become a #train.config, which the dialect verifies.
// ERR-CONFIG: error: train-build-step: nesterov needs optimizer "sgd"

// SGD-LABEL: func.func @m_step(
// SGD-SAME: {train.state = "w.momentum_buffer"}
// SGD-NOT: exp_avg
// SGD-SAME: train.config = #train.config<amp = "off", optimizer = "sgd", loss_scale = "static", nesterov = true, clip_norm = false, clip_value = true, accum_steps = 4,
// SGD-SAME: init_scale = 1.024000e+03 : f32
// SGD: %[[U:.*]]:2, %[[FOUND:.*]], %{{.*}} = train.unscale
// SGD: %[[NORM:.*]] = train.global_norm
// SGD: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// SGD: %[[C:.*]]:2 = train.clip_by_value %{{.*}} grads(%[[U]]#0, %[[U]]#1)
// SGD: train.sgd %{{.*}}, %[[C]]#0, {{.*}} {nesterov} : tensor<2x4xf32>
// SGD: train.update_scale {{.*}} {mode = "static"}
// SGD: return {{.*}}, %[[NORM]], %[[FOUND]], %[[ONE]] :

// -----

// expected-error @below {{train-build-step: no @n_grad (run graph-autodiff first)}}
module {
  graph.model @n {
    %x = graph.input "x" : tensor<4xf32>
    %w = graph.param "w" init(#graph.zeros) : tensor<4xf32>
    %p = graph.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %l = graph.reduce_sum %p : tensor<4xf32> -> tensor<f32>
    graph.output loss = %l : tensor<f32>
  }
}
