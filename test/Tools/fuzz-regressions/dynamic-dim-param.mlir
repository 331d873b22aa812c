// RUN: not ampc check %s 2>&1 | FileCheck %s --implicit-check-not='Stack dump'
// RUN: not ampc compile %s -o %t 2>&1 | FileCheck %s --implicit-check-not='Stack dump'
// Found by test/fuzz/fuzz_models.py under UBSan (scripts/sanitize.sh, seed 15): a
// dynamic dimension ('?') passed verification and its INT64_MIN overflowed
// every size computed from it (ModelSummary, KernelPlanMemory).
// CHECK: dynamic-dim-param.mlir:10:{{[0-9]+}}: error: {{.*}}has a dynamic dimension ('?'); shapes are static
graph.model @gpt_tiny {
  %v1 = graph.input "tokens" : tensor<16x64xi64>
  %v2 = graph.input "targets" : tensor<16x64xi64>
  %v3 = graph.param "wte.weight" init(#graph.normal<std = 0.02>) : tensor<?x64xf32>
  %v4 = graph.param "wpe.weight" init(#graph.normal<std = 0.01>) : tensor<64x64xf32>
  %v5 = graph.param "h0.ln_1.weight" init(#graph.ones) : tensor<64xf32>
  %v6 = graph.param "h0.ln_1.bias" init(#graph.zeros) : tensor<64xf32>
  %v7 = graph.param "h0.attn.c_attn.weight" init(#graph.normal<std = 0.02>) : tensor<192x64xf32>
  %v8 = graph.param "h0.attn.c_attn.bias" init(#graph.zeros) : tensor<192xf32>
  %v9 = graph.param "h0.attn.c_proj.weight" init(#graph.normal<std = 0.01>) : tensor<64x64xf32>
  %v10 = graph.param "h0.attn.c_proj.bias" init(#graph.zeros) : tensor<64xf32>
  %v11 = graph.param "h0.ln_2.weight" init(#graph.ones) : tensor<64xf32>
  %v12 = graph.param "h0.ln_2.bias" init(#graph.zeros) : tensor<64xf32>
  %v13 = graph.param "h0.mlp.c_fc.weight" init(#graph.normal<std = 0.02>) : tensor<?x64xf32>
  %v14 = graph.param "h0.mlp.c_fc.bias" init(#graph.zeros) : tensor<?xf32>
  %v15 = graph.param "h0.mlp.c_proj.weight" init(#graph.normal<std = 0.01>) : tensor<64x?xf32>
  %v16 = graph.param "h0.mlp.c_proj.bias" init(#graph.zeros) : tensor<64xf32>
  %v17 = graph.param "h1.ln_1.weight" init(#graph.ones) : tensor<64xf32>
  %v18 = graph.param "h1.ln_1.bias" init(#graph.zeros) : tensor<64xf32>
  %v19 = graph.param "h1.attn.c_attn.weight" init(#graph.normal<std = 0.02>) : tensor<192x64xf32>
  %v20 = graph.param "h1.attn.c_attn.bias" init(#graph.zeros) : tensor<192xf32>
  %v21 = graph.param "h1.attn.c_proj.weight" init(#graph.normal<std = 0.01>) : tensor<64x64xf32>
  %v22 = graph.param "h1.attn.c_proj.bias" init(#graph.zeros) : tensor<64xf32>
  %v23 = graph.param "h1.ln_2.weight" init(#graph.ones) : tensor<64xf32>
  %v24 = graph.param "h1.ln_2.bias" init(#graph.zeros) : tensor<64xf32>
  %v25 = graph.param "h1.mlp.c_fc.weight" init(#graph.normal<std = 0.02>) : tensor<?x64xf32>
  %v26 = graph.param "h1.mlp.c_fc.bias" init(#graph.zeros) : tensor<?xf32>
  %v27 = graph.param "h1.mlp.c_proj.weight" init(#graph.normal<std = 0.01>) : tensor<64x?xf32>
  %v28 = graph.param "h1.mlp.c_proj.bias" init(#graph.zeros) : tensor<64xf32>
  %v29 = graph.param "ln_f.weight" init(#graph.ones) : tensor<64xf32>
  %v30 = graph.param "ln_f.bias" init(#graph.zeros) : tensor<64xf32>
  %v31 = graph.embedding %v1, %v3 : tensor<16x64xi64>, tensor<?x64xf32> -> tensor<16x64x64xf32>
  %v32 = graph.add %v31, %v4 : tensor<16x64x64xf32>, tensor<64x64xf32> -> tensor<16x64x64xf32>
  %v33 = graph.layer_norm %v32, %v5, %v6 : tensor<16x64x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<16x64x64xf32>
  %v34 = graph.linear %v33, %v7, %v8 : tensor<16x64x64xf32>, tensor<192x64xf32>, tensor<192xf32> -> tensor<16x64x192xf32>
  %v35 = graph.slice %v34 {limits = array<i64: 16, 64, 64>, starts = array<i64: 0, 0, 0>} : tensor<16x64x192xf32> -> tensor<16x64x64xf32>
  %v36 = graph.reshape %v35 : tensor<16x64x64xf32> -> tensor<16x64x4x16xf32>
  %v37 = graph.transpose %v36 {perm = array<i64: 0, 2, 1, 3>} : tensor<16x64x4x16xf32> -> tensor<16x4x64x16xf32>
  %v38 = graph.slice %v34 {limits = array<i64: 16, 64, 128>, starts = array<i64: 0, 0, 64>} : tensor<16x64x192xf32> -> tensor<16x64x64xf32>
  %v39 = graph.reshape %v38 : tensor<16x64x64xf32> -> tensor<16x64x4x16xf32>
  %v40 = graph.transpose %v39 {perm = array<i64: 0, 2, 1, 3>} : tensor<16x64x4x16xf32> -> tensor<16x4x64x16xf32>
  %v41 = graph.slice %v34 {limits = array<i64: 16, 64, 192>, starts = array<i64: 0, 0, 128>} : tensor<16x64x192xf32> -> tensor<16x64x64xf32>
  %v42 = graph.reshape %v41 : tensor<16x64x64xf32> -> tensor<16x64x4x16xf32>
  %v43 = graph.transpose %v42 {perm = array<i64: 0, 2, 1, 3>} : tensor<16x64x4x16xf32> -> tensor<16x4x64x16xf32>
  %v44 = graph.scaled_dot_product_attention %v37, %v40, %v43 {causal} : tensor<16x4x64x16xf32>, tensor<16x4x64x16xf32>, tensor<16x4x64x16xf32> -> tensor<16x4x64x16xf32>
  %v45 = graph.transpose %v44 {perm = array<i64: 0, 2, 1, 3>} : tensor<16x4x64x16xf32> -> tensor<16x64x4x16xf32>
  %v46 = graph.reshape %v45 : tensor<16x64x4x16xf32> -> tensor<16x64x64xf32>
  %v47 = graph.linear %v46, %v9, %v10 : tensor<16x64x64xf32>, tensor<64x64xf32>, tensor<64xf32> -> tensor<16x64x64xf32>
  %v48 = graph.add %v32, %v47 : tensor<16x64x64xf32>, tensor<16x64x64xf32> -> tensor<16x64x64xf32>
  %v49 = graph.layer_norm %v48, %v11, %v12 : tensor<16x64x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<16x64x64xf32>
  %v50 = graph.linear %v49, %v13, %v14 : tensor<16x64x64xf32>, tensor<?x64xf32>, tensor<?xf32> -> tensor<16x64x?xf32>
  %v51 = graph.gelu %v50 {approximate = "tanh"} : tensor<16x64x?xf32>
  %v52 = graph.linear %v51, %v15, %v16 : tensor<16x64x?xf32>, tensor<64x?xf32>, tensor<64xf32> -> tensor<16x64x64xf32>
  %v53 = graph.add %v48, %v52 : tensor<16x64x64xf32>, tensor<16x64x64xf32> -> tensor<16x64x64xf32>
  %v54 = graph.layer_norm %v53, %v17, %v18 : tensor<16x64x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<16x64x64xf32>
  %v55 = graph.linear %v54, %v19, %v20 : tensor<16x64x64xf32>, tensor<192x64xf32>, tensor<192xf32> -> tensor<16x64x192xf32>
  %v56 = graph.slice %v55 {limits = array<i64: 16, 64, 64>, starts = array<i64: 0, 0, 0>} : tensor<16x64x192xf32> -> tensor<16x64x64xf32>
  %v57 = graph.reshape %v56 : tensor<16x64x64xf32> -> tensor<16x64x4x16xf32>
  %v58 = graph.transpose %v57 {perm = array<i64: 0, 2, 1, 3>} : tensor<16x64x4x16xf32> -> tensor<16x4x64x16xf32>
  %v59 = graph.slice %v55 {limits = array<i64: 16, 64, 128>, starts = array<i64: 0, 0, 64>} : tensor<16x64x192xf32> -> tensor<16x64x64xf32>
  %v60 = graph.reshape %v59 : tensor<16x64x64xf32> -> tensor<16x64x4x16xf32>
  %v61 = graph.transpose %v60 {perm = array<i64: 0, 2, 1, 3>} : tensor<16x64x4x16xf32> -> tensor<16x4x64x16xf32>
  %v62 = graph.slice %v55 {limits = array<i64: 16, 64, 192>, starts = array<i64: 0, 0, 128>} : tensor<16x64x192xf32> -> tensor<16x64x64xf32>
  %v63 = graph.reshape %v62 : tensor<16x64x64xf32> -> tensor<16x64x4x16xf32>
  %v64 = graph.transpose %v63 {perm = array<i64: 0, 2, 1, 3>} : tensor<16x64x4x16xf32> -> tensor<16x4x64x16xf32>
  %v65 = graph.scaled_dot_product_attention %v58, %v61, %v64 {causal} : tensor<16x4x64x16xf32>, tensor<16x4x64x16xf32>, tensor<16x4x64x16xf32> -> tensor<16x4x64x16xf32>
  %v66 = graph.transpose %v65 {perm = array<i64: 0, 2, 1, 3>} : tensor<16x4x64x16xf32> -> tensor<16x64x4x16xf32>
  %v67 = graph.reshape %v66 : tensor<16x64x4x16xf32> -> tensor<16x64x64xf32>
  %v68 = graph.linear %v67, %v21, %v22 : tensor<16x64x64xf32>, tensor<64x64xf32>, tensor<64xf32> -> tensor<16x64x64xf32>
  %v69 = graph.add %v53, %v68 : tensor<16x64x64xf32>, tensor<16x64x64xf32> -> tensor<16x64x64xf32>
  %v70 = graph.layer_norm %v69, %v23, %v24 : tensor<16x64x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<16x64x64xf32>
  %v71 = graph.linear %v70, %v25, %v26 : tensor<16x64x64xf32>, tensor<?x64xf32>, tensor<?xf32> -> tensor<16x64x?xf32>
  %v72 = graph.gelu %v71 {approximate = "tanh"} : tensor<16x64x?xf32>
  %v73 = graph.linear %v72, %v27, %v28 : tensor<16x64x?xf32>, tensor<64x?xf32>, tensor<64xf32> -> tensor<16x64x64xf32>
  %v74 = graph.add %v69, %v73 : tensor<16x64x64xf32>, tensor<16x64x64xf32> -> tensor<16x64x64xf32>
  %v75 = graph.layer_norm %v74, %v29, %v30 : tensor<16x64x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<16x64x64xf32>
  %v76 = graph.linear %v75, %v3 : tensor<16x64x64xf32>, tensor<?x64xf32> -> tensor<16x64x?xf32>
  %v77 = graph.cross_entropy %v76, %v2 : tensor<16x64x?xf32>, tensor<16x64xi64> -> tensor<f32>
  graph.output loss = %v77 : tensor<f32>, logits = %v76 : tensor<16x64x?xf32>
}
