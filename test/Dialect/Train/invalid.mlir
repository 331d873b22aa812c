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

func.func @fused_counts(%w: tensor<4xf32>, %t: tensor<i64>, %s: tensor<f32>, %i: tensor<i32>) attributes {train.config = #train.config<amp = "off", optimizer = "adam", loss_scale = "none", nesterov = false, clip_norm = false, clip_value = false, accum_steps = 1, defaults = {}>} {
  // expected-error @below {{needs one gradient and one moment per parameter and one second moment (1)}}
  %r:3 = train.fused_epilogue params(%w) grads(%w) moments(%w) second_moments() step(%t) scaler(%s, %i, %i) divisor(%s) hyper() {hyper_names = []} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// The fused epilogue runs what its function's train.config says.
func.func @fused_no_config(%w: tensor<4xf32>, %t: tensor<i64>, %s: tensor<f32>, %i: tensor<i32>) {
  // expected-error @below {{needs a train.config on its enclosing function}}
  %r:3 = train.fused_epilogue params(%w) grads(%w) moments(%w) second_moments() step(%t) scaler(%s, %i, %i) divisor(%s) hyper() {hyper_names = []} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// expected-error @below {{optimizer must be "sgd", "adam" or "adamw"}}
func.func @config_optimizer() attributes {train.config = #train.config<amp = "off", optimizer = "lion", loss_scale = "none", nesterov = false, clip_norm = false, clip_value = false, accum_steps = 1, defaults = {}>} {
  return
}

// -----

// expected-error @below {{nesterov needs optimizer "sgd"}}
func.func @config_nesterov() attributes {train.config = #train.config<amp = "fp16", optimizer = "adamw", loss_scale = "dynamic", nesterov = true, clip_norm = false, clip_value = false, accum_steps = 1, defaults = {}>} {
  return
}

// -----

// expected-error @below {{accum_steps must be >= 1}}
func.func @config_accum() attributes {train.config = #train.config<amp = "off", optimizer = "sgd", loss_scale = "none", nesterov = false, clip_norm = false, clip_value = false, accum_steps = 0, defaults = {}>} {
  return
}

// -----

// The defaults are the runtime's hyper-parameters (runtime/HyperParams.def).
// expected-error @below {{defaults: 'max_norm' is not a runtime hyper-parameter}}
func.func @config_unknown_default() attributes {train.config = #train.config<amp = "off", optimizer = "sgd", loss_scale = "none", nesterov = false, clip_norm = true, clip_value = false, accum_steps = 1, defaults = {max_norm = 1.0 : f32}>} {
  return
}

// -----

// expected-error @below {{defaults: 'growth_interval' must be an f32 or i32 like the runtime's}}
func.func @config_default_type() attributes {train.config = #train.config<amp = "off", optimizer = "sgd", loss_scale = "none", nesterov = false, clip_norm = false, clip_value = false, accum_steps = 1, defaults = {growth_interval = 2000.0 : f32}>} {
  return
}

// -----

// The binary's own rules for its defaults (runtime/HyperRules.h): it would
// refuse these at start.
// expected-error @below {{defaults: 'lr' must be finite (got nan)}}
func.func @config_default_nan() attributes {train.config = #train.config<amp = "off", optimizer = "sgd", loss_scale = "none", nesterov = false, clip_norm = false, clip_value = false, accum_steps = 1, defaults = {lr = 0x7FC00000 : f32}>} {
  return
}

// -----

// expected-error @below {{defaults: 'init_scale' must be >= 1.17549435e-38 (smaller scales' reciprocals overflow) (got 0)}}
func.func @config_default_scale() attributes {train.config = #train.config<amp = "fp16", optimizer = "sgd", loss_scale = "static", nesterov = false, clip_norm = false, clip_value = false, accum_steps = 1, defaults = {init_scale = 0.0 : f32}>} {
  return
}

// -----

// expected-error @below {{defaults: 'hysteresis' must be >= 1 (got 0)}}
func.func @config_default_hysteresis() attributes {train.config = #train.config<amp = "fp16", optimizer = "sgd", loss_scale = "dynamic", nesterov = false, clip_norm = false, clip_value = false, accum_steps = 1, defaults = {hysteresis = 0 : i32}>} {
  return
}

// -----

// expected-error @below {{train.config must be a #train.config}}
func.func @config_dictionary() attributes {train.config = {optimizer = "sgd"}} {
  return
}

// -----

// expected-error @below {{expected true or false}}
// expected-error @below {{failed to parse Train_ConfigAttr parameter 'nesterov'}}
func.func @config_flag() attributes {train.config = #train.config<amp = "off", optimizer = "sgd", loss_scale = "none", nesterov = 1, clip_norm = false, clip_value = false, accum_steps = 1, defaults = {}>} {
  return
}

// -----

func.func @fused_clip_without_threshold(%w: tensor<4xf32>, %t: tensor<i64>, %s: tensor<f32>, %i: tensor<i32>) attributes {train.config = #train.config<amp = "off", optimizer = "sgd", loss_scale = "none", nesterov = false, clip_norm = true, clip_value = false, accum_steps = 1, defaults = {clip_norm = 1.0 : f32}>} {
  // expected-error @below {{takes the clip_norm / clip_value hyperparameter exactly when its train.config clips}}
  %r:9 = train.fused_epilogue params(%w) grads(%w) moments(%w) second_moments() step(%t) scaler(%s, %i, %i) divisor(%s) hyper() {hyper_names = []} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i1>, tensor<f32>)
  return
}

// -----

func.func @fused_old_hyper_name(%w: tensor<4xf32>, %t: tensor<i64>, %s: tensor<f32>, %i: tensor<i32>) attributes {train.config = #train.config<amp = "off", optimizer = "sgd", loss_scale = "none", nesterov = false, clip_norm = true, clip_value = false, accum_steps = 1, defaults = {}>} {
  // expected-error @below {{hyperparameter "max_norm" is not a runtime hyper-parameter}}
  %r:9 = train.fused_epilogue params(%w) grads(%w) moments(%w) second_moments() step(%t) scaler(%s, %i, %i) divisor(%s) hyper(%s) {hyper_names = ["max_norm"]} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i1>, tensor<f32>)
  return
}
