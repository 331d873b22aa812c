//===- GraphAttrs.td - Parameter initializers --------------------*- td -*-===//
//
// One attribute per initializer, with PyTorch's `torch.nn.init` formulas.
// Fans follow PyTorch: fan_in = size(1) * receptive field, fan_out = size(0) *
// receptive field, receptive field = product of dims 2.. .
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_GRAPH_ATTRS
#define AMPC_GRAPH_ATTRS

include "dialects/Graph/GraphBase.td"

def Graph_DoubleParam : AttrParameter<"::ampc::graph::Real", "a float"> {
  let printer = [{ ::ampc::graph::printDouble($_printer, $_self) }];
}
class Graph_DefaultDouble<string value>
    : DefaultValuedParameter<"::ampc::graph::Real",
                             "::ampc::graph::Real{" # value # "}", "a float"> {
  let printer = [{ ::ampc::graph::printDouble($_printer, $_self) }];
}

class Graph_InitAttr<string name, string attrMnemonic>
    : AttrDef<Graph_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def Graph_ZerosInit : Graph_InitAttr<"ZerosInit", "zeros"> {
  let summary = "Fill with 0 (torch.nn.init.zeros_)";
}
def Graph_OnesInit : Graph_InitAttr<"OnesInit", "ones"> {
  let summary = "Fill with 1 (torch.nn.init.ones_)";
}
def Graph_ConstantInit : Graph_InitAttr<"ConstantInit", "constant"> {
  let summary = "Fill with a value (torch.nn.init.constant_)";
  let parameters = (ins Graph_DoubleParam:$value);
  let assemblyFormat = "`<` struct(params) `>`";
}
def Graph_NormalInit : Graph_InitAttr<"NormalInit", "normal"> {
  let summary = "N(mean, std^2) (torch.nn.init.normal_)";
  let parameters = (ins Graph_DefaultDouble<"0.0">:$mean,
                        Graph_DefaultDouble<"1.0">:$std);
  let assemblyFormat = "(`<` struct(params)^ `>`)?";
  let genVerifyDecl = 1;
}
def Graph_UniformInit : Graph_InitAttr<"UniformInit", "uniform"> {
  let summary = "U(a, b) (torch.nn.init.uniform_)";
  let parameters = (ins Graph_DefaultDouble<"0.0">:$a,
                        Graph_DefaultDouble<"1.0">:$b);
  let assemblyFormat = "(`<` struct(params)^ `>`)?";
  let genVerifyDecl = 1;
}
def Graph_XavierUniformInit : Graph_InitAttr<"XavierUniformInit", "xavier_uniform"> {
  let summary = "U(-a, a), a = gain*sqrt(6/(fan_in+fan_out))";
  let parameters = (ins Graph_DefaultDouble<"1.0">:$gain);
  let assemblyFormat = "(`<` struct(params)^ `>`)?";
}
def Graph_XavierNormalInit : Graph_InitAttr<"XavierNormalInit", "xavier_normal"> {
  let summary = "N(0, std^2), std = gain*sqrt(2/(fan_in+fan_out))";
  let parameters = (ins Graph_DefaultDouble<"1.0">:$gain);
  let assemblyFormat = "(`<` struct(params)^ `>`)?";
}
class Graph_KaimingInit<string name, string attrMnemonic, string formula>
    : Graph_InitAttr<name, attrMnemonic> {
  let summary = formula;
  let description = [{
    `mode` is "fan_in" or "fan_out"; `nonlinearity` is "linear", "relu",
    "leaky_relu" (with negative slope `a`), "tanh" or "sigmoid"; the gain is
    torch.nn.init.calculate_gain's. The defaults are PyTorch's
    (a = 0, fan_in, leaky_relu).
  }];
  let parameters = (ins Graph_DefaultDouble<"0.0">:$a,
      StringRefParameter<"fan mode", "\"fan_in\"">:$mode,
      StringRefParameter<"nonlinearity", "\"leaky_relu\"">:$nonlinearity);
  let assemblyFormat = "(`<` struct(params)^ `>`)?";
  let genVerifyDecl = 1;
}
def Graph_KaimingUniformInit : Graph_KaimingInit<"KaimingUniformInit",
    "kaiming_uniform", "U(-b, b), b = gain*sqrt(3/fan)">;
def Graph_KaimingNormalInit : Graph_KaimingInit<"KaimingNormalInit",
    "kaiming_normal", "N(0, std^2), std = gain/sqrt(fan)">;
def Graph_TruncNormalInit : Graph_InitAttr<"TruncNormalInit", "trunc_normal"> {
  let summary = "N(mean, std^2) truncated to [a, b] (torch.nn.init.trunc_normal_)";
  let parameters = (ins Graph_DefaultDouble<"0.0">:$mean,
                        Graph_DefaultDouble<"1.0">:$std,
                        Graph_DefaultDouble<"-2.0">:$a,
                        Graph_DefaultDouble<"2.0">:$b);
  let assemblyFormat = "(`<` struct(params)^ `>`)?";
  let genVerifyDecl = 1;
}

#endif // AMPC_GRAPH_ATTRS
