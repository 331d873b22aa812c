// RUN: ampc-opt %S/Inputs/net_grad.mlir \
// RUN:   --train-build-step="amp=fp16 loss-scale=dynamic clip-norm=1.0 optimizer=adamw lr=0.01" \
// RUN:   --train-fuse-epilogue --cse --kernel-fuse-elementwise --kernel-plan-memory \
// RUN:   | ampc-translate --ampc-emit-cpu | FileCheck %s
// RUN: ampc-opt %S/Inputs/net_grad.mlir \
// RUN:   --train-build-step="optimizer=sgd nesterov=true loss-scale=static init-scale=128 clip-value=0.25 accum-steps=2" \
// RUN:   --train-fuse-epilogue --kernel-fuse-elementwise --kernel-plan-memory --mlir-print-op-generic \
// RUN:   | ampc-translate --ampc-emit-cpu | FileCheck %s --check-prefix=SGD
// RUN: not ampc-translate --ampc-emit-cpu %S/Inputs/net_grad.mlir 2>&1 | FileCheck %s --check-prefix=RAW

// The class: a cpu::HostModel built from the model's spec; the base owns
// storage, initialization, accumulation, the epilogue and the state.
// CHECK: #include "runtime/cpu/GeneratedPrelude.h"
// CHECK: class NetModel final : public ampc::cpu::HostModel {
// CHECK-NEXT: public:
// CHECK-NEXT: NetModel() : HostModel(spec()) {}
// CHECK-NOT: override {
// CHECK: private:

// runForwardBackward: the parameters by index, fused loops rounding at
// every op boundary, one library call per other op, the dropout's step.
// Under fp16 a fused loop runs over blocks, one op at a time: binary16
// converted a block at a time (runtime/cpu/HalfBlocks.h), a float input or
// a broadcast one read element by element, each half result rounded (a
// result only stored is rounded by the store).
// CHECK-LABEL: void runForwardBackward(const void *const *inputs, int micro) override {
// CHECK-NEXT: std::byte *arena = this->arena();
// CHECK-NEXT: float scale = lossScale();
// CHECK: float *in_image = input<float>(inputs[0]);
// CHECK: int64_t *in_label = input<int64_t>(inputs[1]);
// CHECK: float *p_fc_weight = weight(0);
// CHECK: float *p_fc_bias = weight(1);
// CHECK: x0[l] = float(p_fc_weight[i]);
// CHECK: call(k_linear_, in, out, [[$LINEAR:attrs[0-9]+_]]);
// CHECK: // %{{[0-9]+}} = fused loop: add relu
// CHECK-NEXT: for (int64_t i0 = 0; i0 < 12; i0 += 12) {
// CHECK-NEXT: const int64_t n = std::min<int64_t>(12, 12 - i0);
// CHECK-NEXT: float x0[12];
// CHECK-NEXT: ampc::cpu::halfToFloat(t{{[0-9]+}} + i0, x0, n);
// CHECK-NEXT: float x1[12];
// CHECK-NEXT: for (int64_t l = 0; l < n; ++l) {
// CHECK-NEXT: const int64_t i = i0 + l;
// CHECK-NEXT: x1[l] = float(t{{[0-9]+}}[i % 3]);
// CHECK-NEXT: }
// CHECK-NEXT: // graph.add
// CHECK-NEXT: float y0[12];
// CHECK-NEXT: for (int64_t l = 0; l < n; ++l) {
// CHECK-NEXT: y0[l] = x0[l] + x1[l];
// CHECK-NEXT: }
// CHECK-NEXT: ampc::cpu::roundThroughHalf(y0, n);
// CHECK-NEXT: // graph.relu
// CHECK-NEXT: float y1[12];
// CHECK-NEXT: for (int64_t l = 0; l < n; ++l) {
// CHECK-NEXT: y1[l] = ampc::num::relu(y0[l]);
// CHECK-NEXT: }
// CHECK-NEXT: ampc::cpu::floatToHalf(y1, t{{[0-9]+}} + i0, n);
// CHECK-NEXT: }
// CHECK: const ampc::cpu::Attrs attrs{{[{][{]}}"key", int64_t(7)}, {"p", 0.1}, {"seed", int64_t(seed())}, {"step", int64_t(iteration() * 1 + micro)}, {"shard", shard()}};
// CHECK-NEXT: call(k_dropout_, in, out, attrs);
// CHECK: call(k_cross_entropy_, in, out, [[$CE:attrs[0-9]+_]]);
// CHECK: x1[l] = float((&scale)[0]);
// CHECK: call(k_transpose_, in, out, [[$PERM:attrs[0-9]+_]]);
// fc.weight's gradient has storage of its own: micro-batch 0 writes it
// straight into HostModel's gradient buffer (passes/GradInPlace.h), which
// storeGrad then leaves alone; fc.bias's is a reshape's alias and copied.
// Each is stored, and its ready point (gradReady: data-parallel overlap)
// printed, right after the op that finishes it, before the loss.
// CHECK: float *[[G0:t[0-9]+]] = micro == 0 ? grad(0) : reinterpret_cast<float *>(arena + {{[0-9]+}});  // written in place, no storeGrad copy
// CHECK: [[G0]][i] = float(y0[l]);
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: storeGrad(0, [[G0]], micro);  // fc.weight
// CHECK-NEXT: gradReady(0);  // final: its all-reduce may start
// CHECK: float *[[R1:t[0-9]+]] = [[R0:t[0-9]+]];  // %{{[0-9]+}} = graph.reshape (no copy)
// CHECK-NEXT: float *[[R2:t[0-9]+]] = [[R1]];  // %{{[0-9]+}} = graph.reshape (no copy)
// CHECK-NEXT: storeGrad(1, [[R2]], micro);  // fc.bias
// CHECK-NEXT: gradReady(1);  // final: its all-reduce may start
// CHECK-EMPTY:
// CHECK-NEXT: // Results: the loss (summed over micro-batches); the gradients were stored above.
// CHECK-NEXT: addLoss(float(t{{[0-9]+}}[0]));
// CHECK-NEXT: }

// runEvaluate: the model's forward; dropout is the identity.
// CHECK-LABEL: void runEvaluate(const void *const *inputs, void *const *outputs) override {
// CHECK-NEXT: std::byte *arena = this->arena();
// CHECK-NOT: k_dropout_
// CHECK-NOT: seed()
// CHECK: half *t{{[0-9]+}} = t{{[0-9]+}};  // %{{[0-9]+}} = graph.dropout (no copy)
// CHECK: std::memcpy(outputs[0], t{{[0-9]+}}, 4);  // loss
// CHECK: std::memcpy(outputs[1], t{{[0-9]+}}, 48);  // logits

// The spec: metadata, configuration (which picks the epilogue), defaults,
// the arena.
// CHECK-LABEL: static ampc::rt::ModelSpec spec() {
// CHECK: s.inputs = {{[{][{]}}"image", DType::F32, {4, 8}}, {"label", DType::I64, {4}, 3, -100, "classes of the cross_entropy"}};
// CHECK: s.outputs = {{[{][{]}}"loss", DType::F32, {}}, {"logits", DType::F32, {4, 3}}};
// CHECK: ampc::rt::makeParam("fc.weight", {3, 8}, ampc::num::InitAttrs{.kind = "kaiming_uniform", .a = 2.23606797749979, .mode = "fan_in", .nonlinearity = "leaky_relu"}),
// CHECK: ampc::rt::makeParam("fc.bias", {3}, ampc::num::InitAttrs{.kind = "zeros"}),
// CHECK: s.config.amp = "fp16";
// CHECK: s.config.optimizer = "adamw";
// CHECK: s.config.lossScale = "dynamic";
// CHECK: s.config.clipNorm = true;
// CHECK: s.defaults.lr = 0.01f;
// CHECK: s.defaults.clipNorm = 1.0f;
// CHECK: s.defaults.initScale = 65536.0f;
// CHECK: s.arenaBytes = {{[1-9][0-9]*}};
// CHECK: const ampc::cpu::Kernel k_linear_ = kernel("graph.linear");
// CHECK: const ampc::cpu::Kernel k_dropout_ = kernel("graph.dropout");
// Each constant attribute set once, as a member the calls share.
// CHECK: // The library calls' constant attributes, built once.
// CHECK-DAG: const ampc::cpu::Attrs [[$LINEAR]]{};
// CHECK-DAG: const ampc::cpu::Attrs [[$CE]]{{[{][{]}}"ignore_index", int64_t(-100)}, {"label_smoothing", 0.0}};
// CHECK-DAG: const ampc::cpu::Attrs [[$PERM]]{{[{][{]}}"perm", std::vector<int64_t>{1, 0}}};
// CHECK-NOT: static const ampc::cpu::Attrs
// CHECK: int main(int argc, char **argv) {
// CHECK-NEXT: ampc::cpu::useFastBlasKernels(argv);
// CHECK-NEXT: static NetModel model;
// CHECK-NEXT: return ampc::rt::trainMain(argc, argv, model);

// The sgd variant: its epilogue is chosen by the spec's configuration.
// SGD: {"step", int64_t(iteration() * 2 + micro)}
// An absent trailing optional operand is left off (no CSE in this run, so
// the unused layer norm is still there; printed in the generic form).
// SGD: // %{{[0-9]+}} = graph.layer_norm
// SGD-NEXT: const TensorRef in[] = {{[{][{]}}t{{[0-9]+}}, DType::F32, 2, {4, 3}}, {p_fc_bias, DType::F32, 1, {3}}};
// SGD: call(k_layer_norm_, in, out, [[EPS:attrs[0-9]+_]]);
// SGD: s.config.optimizer = "sgd";
// SGD: s.config.lossScale = "static";
// SGD: s.config.nesterov = true;
// SGD: s.config.clipNorm = false;
// SGD: s.config.clipValue = true;
// SGD: s.config.accumSteps = 2;
// SGD: s.defaults.initScale = 128.0f;
// SGD: const ampc::cpu::Attrs [[EPS]]{{[{][{]}}"eps", 1e-05}};

// RAW: error: no @net_grad / @net_step (run the training pipeline first)

