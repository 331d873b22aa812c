// One pre-norm GPT block with a tied head, for `ampc explain` tests:
// B=2, T=8, C=16, 2 heads of 8, vocabulary 32.
graph.model @block {
  %ids = graph.input "ids" : tensor<2x8xi64>
  %targets = graph.input "targets" : tensor<16xi64>
  %wte = graph.param "wte" init(#graph.normal<std = 0.02>) : tensor<32x16xf32>
  %wpe = graph.param "wpe" init(#graph.normal<std = 0.01>) : tensor<8x16xf32>
  %ln1_w = graph.param "ln1.weight" init(#graph.ones) : tensor<16xf32>
  %ln1_b = graph.param "ln1.bias" init(#graph.zeros) : tensor<16xf32>
  %qkv_w = graph.param "attn.qkv.weight" init(#graph.normal<std = 0.02>) : tensor<48x16xf32>
  %qkv_b = graph.param "attn.qkv.bias" init(#graph.zeros) : tensor<48xf32>
  %o_w = graph.param "attn.out.weight" init(#graph.normal<std = 0.02>) : tensor<16x16xf32>
  %ln2_w = graph.param "ln2.weight" init(#graph.ones) : tensor<16xf32>
  %ln2_b = graph.param "ln2.bias" init(#graph.zeros) : tensor<16xf32>
  %fc_w = graph.param "mlp.fc.weight" init(#graph.normal<std = 0.02>) : tensor<64x16xf32>
  %proj_w = graph.param "mlp.proj.weight" init(#graph.normal<std = 0.02>) : tensor<16x64xf32>
  %lnf_w = graph.param "lnf.weight" init(#graph.ones) : tensor<16xf32>
  %lnf_b = graph.param "lnf.bias" init(#graph.zeros) : tensor<16xf32>

  %tok = graph.embedding %ids, %wte : tensor<2x8xi64>, tensor<32x16xf32> -> tensor<2x8x16xf32>
  %x0 = graph.add %tok, %wpe : tensor<2x8x16xf32>, tensor<8x16xf32> -> tensor<2x8x16xf32>
  %ln1 = graph.layer_norm %x0, %ln1_w, %ln1_b : tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x8x16xf32>
  %qkv = graph.linear %ln1, %qkv_w, %qkv_b : tensor<2x8x16xf32>, tensor<48x16xf32>, tensor<48xf32> -> tensor<2x8x48xf32>
  %q = graph.slice %qkv {starts = array<i64: 0, 0, 0>, limits = array<i64: 2, 8, 16>} : tensor<2x8x48xf32> -> tensor<2x8x16xf32>
  %k = graph.slice %qkv {starts = array<i64: 0, 0, 16>, limits = array<i64: 2, 8, 32>} : tensor<2x8x48xf32> -> tensor<2x8x16xf32>
  %v = graph.slice %qkv {starts = array<i64: 0, 0, 32>, limits = array<i64: 2, 8, 48>} : tensor<2x8x48xf32> -> tensor<2x8x16xf32>
  %q4 = graph.reshape %q : tensor<2x8x16xf32> -> tensor<2x8x2x8xf32>
  %k4 = graph.reshape %k : tensor<2x8x16xf32> -> tensor<2x8x2x8xf32>
  %v4 = graph.reshape %v : tensor<2x8x16xf32> -> tensor<2x8x2x8xf32>
  %qh = graph.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %kh = graph.transpose %k4 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %vh = graph.transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %att = graph.scaled_dot_product_attention %qh, %kh, %vh {causal} : tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %att_t = graph.transpose %att {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x8x8xf32> -> tensor<2x8x2x8xf32>
  %att_m = graph.reshape %att_t : tensor<2x8x2x8xf32> -> tensor<2x8x16xf32>
  %o = graph.linear %att_m, %o_w : tensor<2x8x16xf32>, tensor<16x16xf32> -> tensor<2x8x16xf32>
  %x1 = graph.add %x0, %o : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  %ln2 = graph.layer_norm %x1, %ln2_w, %ln2_b : tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x8x16xf32>
  %fc = graph.linear %ln2, %fc_w : tensor<2x8x16xf32>, tensor<64x16xf32> -> tensor<2x8x64xf32>
  %act = graph.gelu %fc {approximate = "tanh"} : tensor<2x8x64xf32>
  %proj = graph.linear %act, %proj_w : tensor<2x8x64xf32>, tensor<16x64xf32> -> tensor<2x8x16xf32>
  %x2 = graph.add %x1, %proj : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  %lnf = graph.layer_norm %x2, %lnf_w, %lnf_b : tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x8x16xf32>
  // Tied head: the token embedding table is also the output projection.
  %logits = graph.linear %lnf, %wte : tensor<2x8x16xf32>, tensor<32x16xf32> -> tensor<2x8x32xf32>
  %probs = graph.softmax %logits {axis = -1} : tensor<2x8x32xf32>
  %flat = graph.reshape %logits : tensor<2x8x32xf32> -> tensor<16x32xf32>
  %loss = graph.cross_entropy %flat, %targets : tensor<16x32xf32>, tensor<16xi64> -> tensor<f32>
  graph.output loss = %loss : tensor<f32>, probs = %probs : tensor<2x8x32xf32>
}
