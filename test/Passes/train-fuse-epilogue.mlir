// RUN: ampc-opt %s --split-input-file --verify-diagnostics --train-fuse-epilogue | FileCheck %s

// Before: the epilogue of a one-parameter AdamW step with clipping by norm
// and dynamic loss scaling, as train-build-step writes it.
func.func @m_step(%w: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>,
                  %step: tensor<i64>, %scale: tensor<f32>, %tracker: tensor<i32>, %hyst: tensor<i32>,
                  %div: tensor<f32>, %lr: tensor<f32>, %b1: tensor<f32>, %b2: tensor<f32>,
                  %eps: tensor<f32>, %wd: tensor<f32>, %maxnorm: tensor<f32>, %gf: tensor<f32>,
                  %gi: tensor<i32>, %bf: tensor<f32>, %hy: tensor<i32>, %lo: tensor<f32>, %hi: tensor<f32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i32>, tensor<i32>,
        tensor<f32>, tensor<i1>, tensor<f32>)
    attributes {train.config = #train.config<amp = "fp16", optimizer = "adamw", loss_scale = "dynamic", nesterov = false, clip_norm = true, clip_value = false, accum_steps = 1, defaults = {}>} {
  %u, %found, %sumsq = train.unscale %scale, %div grads(%g) : tensor<4xf32>
  %norm = train.global_norm %sumsq : tensor<f32>
  %coef = train.clip_coef %norm, %maxnorm : tensor<f32>
  %c = train.clip_by_norm %coef grads(%u) : tensor<4xf32>
  %t = train.advance_step %step, %found : tensor<i64>
  %w1, %m1, %v1 = train.adam %w, %c, %m, %v, %t, %found lr(%lr) betas(%b1, %b2) eps(%eps) weight_decay(%wd) {decoupled} : tensor<4xf32>
  %s1, %tr1, %h1 = train.update_scale %scale, %tracker, %hyst, %found growth(%gf, %gi) backoff(%bf) hysteresis(%hy) bounds(%lo, %hi) {mode = "dynamic"} : tensor<f32>, tensor<i32>
  return %w1, %m1, %v1, %t, %s1, %tr1, %h1, %norm, %found, %coef
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i1>, tensor<f32>
}

// After: one op; nothing else is left.
// CHECK-LABEL: func.func @m_step(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4xf32>, %[[G:[a-z0-9]+]]: tensor<4xf32>, %[[M:[a-z0-9]+]]: tensor<4xf32>, %[[V:[a-z0-9]+]]: tensor<4xf32>
// CHECK-NOT: train.unscale
// CHECK-NOT: train.adam
// CHECK: %[[F:.*]]:10 = train.fused_epilogue params(%[[W]]) grads(%[[G]]) moments(%[[M]]) second_moments(%[[V]])
// CHECK-SAME: {hyper_names = ["lr", "beta1", "beta2", "eps", "weight_decay", "clip_norm", "growth_factor", "growth_interval", "backoff_factor", "hysteresis", "min_scale", "max_scale"]}
// CHECK-NEXT: return %[[F]]#0, %[[F]]#1, %[[F]]#2, %[[F]]#3, %[[F]]#4, %[[F]]#5, %[[F]]#6, %[[F]]#7, %[[F]]#8, %[[F]]#9

// -----

// SGD without clipping: the clip coefficient is the constant 1 the step
// returned, and it becomes the fused op's last result.
func.func @s_step(%w: tensor<4xf32>, %g: tensor<4xf32>, %buf: tensor<4xf32>,
                  %step: tensor<i64>, %scale: tensor<f32>, %tracker: tensor<i32>, %hyst: tensor<i32>,
                  %div: tensor<f32>, %lr: tensor<f32>, %mom: tensor<f32>, %damp: tensor<f32>, %wd: tensor<f32>,
                  %gf: tensor<f32>, %gi: tensor<i32>, %bf: tensor<f32>, %hy: tensor<i32>, %lo: tensor<f32>, %hi: tensor<f32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i1>, tensor<f32>)
    attributes {train.config = #train.config<amp = "off", optimizer = "sgd", loss_scale = "none", nesterov = false, clip_norm = false, clip_value = false, accum_steps = 1, defaults = {}>} {
  %u, %found, %sumsq = train.unscale %scale, %div grads(%g) : tensor<4xf32>
  %norm = train.global_norm %sumsq : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %t = train.advance_step %step, %found : tensor<i64>
  %w1, %b1 = train.sgd %w, %u, %buf, %t, %found lr(%lr) momentum(%mom) dampening(%damp) weight_decay(%wd) : tensor<4xf32>
  %s1, %tr1, %h1 = train.update_scale %scale, %tracker, %hyst, %found growth(%gf, %gi) backoff(%bf) hysteresis(%hy) bounds(%lo, %hi) {mode = "none"} : tensor<f32>, tensor<i32>
  return %w1, %b1, %t, %s1, %tr1, %h1, %norm, %found, %one
      : tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i1>, tensor<f32>
}

// CHECK-LABEL: func.func @s_step(
// CHECK-NOT: arith.constant
// CHECK: %[[F:.*]]:9 = train.fused_epilogue params({{.*}}) grads({{.*}}) moments({{.*}}) second_moments()
// CHECK-SAME: {hyper_names = {{.*}}}
// CHECK-NEXT: return {{.*}}, %[[F]]#8 :

// -----

func.func @twice(%g: tensor<4xf32>, %s: tensor<f32>, %d: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %u, %f, %ss = train.unscale %s, %d grads(%g) : tensor<4xf32>
  // expected-error @below {{appears twice in one epilogue}}
  %u2, %f2, %ss2 = train.unscale %s, %d grads(%g) : tensor<4xf32>
  return %ss, %ss2 : tensor<f32>, tensor<f32>
}

// -----

// The fused op reads what it runs from train.config: the ops must agree.
// expected-error @below {{train-fuse-epilogue: the epilogue ops do not match train.config}}
func.func @mismatch(%w: tensor<4xf32>, %g: tensor<4xf32>, %buf: tensor<4xf32>,
                  %step: tensor<i64>, %scale: tensor<f32>, %tracker: tensor<i32>, %hyst: tensor<i32>,
                  %div: tensor<f32>, %lr: tensor<f32>, %mom: tensor<f32>, %damp: tensor<f32>, %wd: tensor<f32>,
                  %gf: tensor<f32>, %gi: tensor<i32>, %bf: tensor<f32>, %hy: tensor<i32>, %lo: tensor<f32>, %hi: tensor<f32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i1>, tensor<f32>)
    attributes {train.config = #train.config<amp = "off", optimizer = "sgd", loss_scale = "dynamic", nesterov = false, clip_norm = false, clip_value = false, accum_steps = 1, defaults = {}>} {
  %u, %found, %sumsq = train.unscale %scale, %div grads(%g) : tensor<4xf32>
  %norm = train.global_norm %sumsq : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %t = train.advance_step %step, %found : tensor<i64>
  %w1, %b1 = train.sgd %w, %u, %buf, %t, %found lr(%lr) momentum(%mom) dampening(%damp) weight_decay(%wd) : tensor<4xf32>
  %s1, %tr1, %h1 = train.update_scale %scale, %tracker, %hyst, %found growth(%gf, %gi) backoff(%bf) hysteresis(%hy) bounds(%lo, %hi) {mode = "none"} : tensor<f32>, tensor<i32>
  return %w1, %b1, %t, %s1, %tr1, %h1, %norm, %found, %one
      : tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i1>, tensor<f32>
}
