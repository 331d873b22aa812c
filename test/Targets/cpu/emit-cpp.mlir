// RUN: ampc-opt %S/Inputs/net_grad.mlir \
// RUN:   --train-build-step="amp=fp16 loss-scale=dynamic clip-norm=1.0 optimizer=adamw lr=0.01" \
// RUN:   --train-fuse-epilogue --cse --kernel-fuse-elementwise --kernel-plan-memory \
// RUN:   | ampc-translate --ampc-emit-cpu | FileCheck %s
// RUN: ampc-opt %S/Inputs/net_grad.mlir \
// RUN:   --train-build-step="optimizer=sgd nesterov=true loss-scale=static init-scale=128 clip-value=0.25 accum-steps=2" \
// RUN:   --train-fuse-epilogue --kernel-fuse-elementwise --kernel-plan-memory --mlir-print-op-generic \
// RUN:   | ampc-translate --ampc-emit-cpu | FileCheck %s --check-prefix=SGD
// RUN: not ampc-translate --ampc-emit-cpu %S/Inputs/net_grad.mlir 2>&1 | FileCheck %s --check-prefix=RAW

// The class and its metadata.
// CHECK: #include "runtime/Model.h"
// CHECK: class NetModel final : public ampc::rt::Model {
// CHECK: addParam("fc.weight", {3, 8}, ampc::num::InitAttrs{.kind = "kaiming_uniform", .a = 2.23606797749979, .mode = "fan_in", .nonlinearity = "leaky_relu"});  // w_[0]
// CHECK: addParam("fc.bias", {3}, ampc::num::InitAttrs{.kind = "zeros"});  // w_[1]
// CHECK: // One arena for every intermediate tensor: [[ARENA:[0-9]+]] bytes ([[NOREUSE:[0-9]+]] without reuse).
// CHECK: arenaStorage_.resize([[ARENA]] + 64);
// CHECK: ampc::rt::Hyper defaults() const override {
// CHECK: h.lr = 0.01f;
// CHECK: h.clipNorm = 1.0f;
// CHECK: h.initScale = 65536.0f;
// CHECK: ampc::num::fillInit(params_[p].init, seed, ampc::num::streamId(params_[p].name), w_[p]);
// CHECK: scaler_.scale = hyper.initScale;

// forwardBackward: casts of the parameters once, fused loops rounding at
// every op boundary, one library call per other op, the dropout's step.
// CHECK-LABEL: void forwardBackward(const void *const *inputs, int micro) override {
// CHECK: float lossScale = scaler_.scale;
// CHECK: float *in_image = input<float>(inputs[0]);
// CHECK: int64_t *in_label = input<int64_t>(inputs[1]);
// CHECK: float *p_fc_weight = w_[0].data();
// CHECK-COUNT-1: const float x0 = float(p_fc_weight[i]);
// CHECK: call(k_linear_, in, out, attrs);
// CHECK: // %{{[0-9]+}} = fused loop: add relu
// CHECK-NEXT: for (int64_t i = 0; i < 12; ++i) {
// CHECK-NEXT: const float x0 = float(t{{[0-9]+}}[i]);
// CHECK-NEXT: const float x1 = float(t{{[0-9]+}}[i % 3]);
// CHECK-NEXT: const float y0 = round<half>(x0 + x1);  // graph.add
// CHECK-NEXT: const float y1 = round<half>(ampc::num::relu(y0));  // graph.relu
// CHECK-NEXT: t{{[0-9]+}}[i] = half(y1);
// CHECK: const ampc::cpu::Attrs attrs{{[{][{]}}"key", int64_t(7)}, {"p", 0.1}, {"seed", int64_t(seed_)}, {"step", int64_t(iteration_ * 1 + micro)}, {"shard", shard_}};
// CHECK-NEXT: call(k_dropout_, in, out, attrs);
// CHECK: static const ampc::cpu::Attrs attrs{{[{][{]}}"ignore_index", int64_t(-100)}, {"label_smoothing", 0.0}};
// CHECK: const float x1 = float((&lossScale)[0]);
// CHECK: static const ampc::cpu::Attrs attrs{{[{][{]}}"perm", std::vector<int64_t>{1, 0}}};
// CHECK: float *[[R1:t[0-9]+]] = [[R0:t[0-9]+]];  // %{{[0-9]+}} = graph.reshape (no copy)
// CHECK: float *[[R2:t[0-9]+]] = [[R1]];  // %{{[0-9]+}} = graph.reshape (no copy)
// CHECK: lossAccumulator_ += float(t{{[0-9]+}}[0]);
// CHECK: accumulate(g_[0].data(), t{{[0-9]+}}, 24, micro);  // fc.weight
// CHECK: accumulate(g_[1].data(), [[R2]], 3, micro);  // fc.bias

// step(): the fused epilogue.
// CHECK-LABEL: ampc::rt::StepStats step(const ampc::rt::Hyper &h, float gradDivisor) override {
// CHECK: // train.fused_epilogue {optimizer = "adamw", loss_scale = "dynamic", clip_norm}
// CHECK: ampc::cpu::unscaleCheckAndNorm(grads, invScale);
// CHECK: stats.clipCoef = ampc::cpu::clipGradNorm(grads, unscaled.norm, h.clipNorm);
// CHECK: if (!foundInf) {
// CHECK-NEXT: ++step_;
// CHECK: opt.decoupled = true;
// CHECK: ampc::cpu::adamStep(w_[p].data(), g_[p].data(), m_[p].data(), v_[p].data(), int64_t(w_[p].size()), opt, step_);
// CHECK: ampc::num::updateScaler(scaler_, foundInf, ampc::rt::lossScaleParams(h));

// evaluate(): the model's forward; dropout is the identity.
// CHECK-LABEL: void evaluate(const void *const *inputs, void *const *outputs) override {
// CHECK-NOT: k_dropout_
// CHECK: half *t{{[0-9]+}} = t{{[0-9]+}};  // %{{[0-9]+}} = graph.dropout (no copy)
// CHECK: std::memcpy(outputs[0], t{{[0-9]+}}, 4);  // loss
// CHECK: std::memcpy(outputs[1], t{{[0-9]+}}, 48);  // logits
// CHECK: s.push_back({n + ".exp_avg_sq", shape, v_[p].data()});

// CHECK: std::vector<ampc::rt::TensorInfo> inputs_ = {{[{][{]}}"image", DType::F32, {4, 8}}, {"label", DType::I64, {4}, 3, -100, "classes of the cross_entropy"}};
// CHECK: std::vector<ampc::rt::TensorInfo> outputs_ = {{[{][{]}}"loss", DType::F32, {}}, {"logits", DType::F32, {4, 3}}};
// CHECK: c.amp = "fp16";
// CHECK: c.lossScale = "dynamic";
// CHECK: c.clipNorm = true;
// CHECK: const ampc::cpu::Kernel k_linear_ = kernel("graph.linear");
// CHECK: const ampc::cpu::Kernel k_dropout_ = kernel("graph.dropout");
// CHECK: int main(int argc, char **argv) {
// CHECK-NEXT: static NetModel model;
// CHECK-NEXT: return ampc::rt::trainMain(argc, argv, model);

// The sgd variant has momentum buffers, no second moments, a static scale.
// SGD: h.initScale = 128.0f;
// SGD: {"step", int64_t(iteration_ * 2 + micro)}
// An absent trailing optional operand is left off (no CSE in this run, so
// the unused layer norm is still there; printed in the generic form).
// SGD: // %{{[0-9]+}} = graph.layer_norm
// SGD-NEXT: const TensorRef in[] = {{[{][{]}}t{{[0-9]+}}, DType::F32, 2, {4, 3}}, {p_fc_bias, DType::F32, 1, {3}}};
// SGD: static const ampc::cpu::Attrs attrs{{[{][{]}}"eps", 1e-05}};

// SGD: // train.fused_epilogue {optimizer = "sgd", loss_scale = "static", clip_value, nesterov}
// SGD-NOT: clipGradNorm
// SGD: ampc::cpu::clipGradValue(grads, h.clipValue);
// SGD: opt.nesterov = true;
// SGD: ampc::cpu::sgdStep(w_[p].data(), g_[p].data(), m_[p].data(), int64_t(w_[p].size()), opt, step_ == 1);
// SGD: // Static loss scaling: the scale stays; skipped steps are counted.
// SGD-NEXT: if (foundInf)
// SGD-NEXT: ++scaler_.skippedSteps;
// SGD: s.push_back({n + ".momentum_buffer", shape, m_[p].data()});
// SGD: c.accumSteps = 2;
// SGD: std::vector<float> w_[kNumParams], g_[kNumParams], m_[kNumParams];

// RAW: error: no @net_grad / @net_step (run the training pipeline first)
