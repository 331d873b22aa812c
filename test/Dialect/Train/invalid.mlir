// RUN: ampc-opt %s --split-input-file --verify-diagnostics

func.func @clip_scaled(%g: tensor<4xf32>, %c: tensor<f32>) -> tensor<4xf32> {
  // expected-error @below {{clips unscaled gradients only}}
  %r = train.clip_by_norm %c grads(%g) : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @mode(%s: tensor<f32>, %i: tensor<i32>, %f: tensor<i1>) {
  // expected-error @below {{mode must be "dynamic", "static" or "none"}}
  %a, %b, %c = train.update_scale %s, %i, %i, %f growth(%s, %i) backoff(%s) hysteresis(%i) bounds(%s, %s) {mode = "sometimes"} : tensor<f32>, tensor<i32>
  return
}

// -----

func.func @fused_counts(%w: tensor<4xf32>, %t: tensor<i64>, %s: tensor<f32>, %i: tensor<i32>) {
  // expected-error @below {{needs one gradient and one moment per parameter and one second moment (1)}}
  %r:3 = train.fused_epilogue params(%w) grads(%w) moments(%w) second_moments() step(%t) scaler(%s, %i, %i) divisor(%s) hyper() {optimizer = "adam", loss_scale = "none", hyper_names = []} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @fused_optimizer(%w: tensor<4xf32>, %t: tensor<i64>, %s: tensor<f32>, %i: tensor<i32>) {
  // expected-error @below {{optimizer must be "sgd", "adam" or "adamw"}}
  %r:3 = train.fused_epilogue params(%w) grads(%w) moments(%w) second_moments() step(%t) scaler(%s, %i, %i) divisor(%s) hyper() {optimizer = "lion", loss_scale = "none", hyper_names = []} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}
