# Builds ONNX node-test dirs for recurrent cases; outputs from onnxruntime
# (1.32; it refuses layout=1, so those run as layout 0 on transposed
# tensors). Regenerate: python gen.py test/Import/Inputs/recurrent-ort
import numpy as np, onnx, onnxruntime as ort, os, sys, shutil
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(0)
OUT = sys.argv[1] if len(sys.argv) > 1 else 'cases'
shutil.rmtree(OUT, ignore_errors=True)

def case(name, op, T=3, B=2, I=3, H=4, dirs=1, layout=0, use=('B',), outs=('Y','Y_h','Y_c'), opset=14, scale=1.0, **attrs):
    G = {'LSTM':4,'GRU':3,'RNN':1}[op]
    xs = [T,B,I] if layout == 0 else [B,T,I]
    st = [dirs,B,H] if layout == 0 else [B,dirs,H]
    feeds = {'X': rng.standard_normal(xs).astype(np.float32)*scale,
             'W': (rng.standard_normal([dirs,G*H,I])*0.5).astype(np.float32),
             'R': (rng.standard_normal([dirs,G*H,H])*0.5).astype(np.float32)}
    ins = ['X','W','R']
    opt = {'B': ('B',[dirs,2*G*H]), 'seq': None, 'h0': ('initial_h', st), 'c0': ('initial_c', st), 'P': ('P',[dirs,3*H])}
    order = ['B','seq','h0','c0','P']
    last = max([order.index(u) for u in use] + [-1])
    for k in order[:last+1]:
        if k in use and opt[k]:
            nm, sh = opt[k]; feeds[nm] = rng.standard_normal(sh).astype(np.float32)*0.5; ins.append(nm)
        else:
            ins.append('')
    if op != 'LSTM':
        ins = ins[:6]
        outs = [o for o in outs if o != 'Y_c']
    outnames = [o if o in outs else '' for o in ['Y','Y_h','Y_c'][:3 if op=='LSTM' else 2]]
    while outnames and outnames[-1] == '': outnames.pop()
    node = helper.make_node(op, ins, outnames, hidden_size=H, layout=layout, **attrs)
    gi = [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in feeds.items()]
    ys = {'Y': [T,dirs,B,H] if layout == 0 else [B,T,dirs,H], 'Y_h': st, 'Y_c': st}
    go = [helper.make_tensor_value_info(o, TensorProto.FLOAT, ys[o]) for o in outnames if o]
    m = helper.make_model(helper.make_graph([node], name, gi, go), opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    if layout == 0:
        sess = ort.InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider'])
        res = sess.run(None, feeds)
    else:  # ORT lacks layout=1: run the layout-0 twin on transposed tensors
        node0 = helper.make_node(op, ins, outnames, hidden_size=H, layout=0, **attrs)
        f0 = dict(feeds); f0['X'] = feeds['X'].transpose(1,0,2)
        for k in ('initial_h','initial_c'):
            if k in f0: f0[k] = feeds[k].transpose(1,0,2)
        gi0 = [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in f0.items()]
        go0 = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outnames if o]
        m0 = helper.make_model(helper.make_graph([node0], name, gi0, go0), opset_imports=[helper.make_opsetid('', opset)])
        m0.ir_version = 8
        sess = ort.InferenceSession(m0.SerializeToString(), providers=['CPUExecutionProvider'])
        res = sess.run(None, f0)
        res = [r.transpose(2,0,1,3) if o == 'Y' else r.transpose(1,0,2) for o, r in zip([o for o in outnames if o], res)]
    d = os.path.join(OUT, 'test_' + name); os.makedirs(d + '/test_data_set_0')
    onnx.save(m, d + '/model.onnx')
    for i, (k, v) in enumerate(feeds.items()):
        open(f'{d}/test_data_set_0/input_{i}.pb','wb').write(numpy_helper.from_array(v, k).SerializeToString())
    for i, (k, v) in enumerate(zip([o for o in outnames if o], res)):
        open(f'{d}/test_data_set_0/output_{i}.pb','wb').write(numpy_helper.from_array(v, k).SerializeToString())

# LSTM
case('lstm_fwd_all', 'LSTM', use=('B','h0','c0','P'))
case('lstm_layout1_states', 'LSTM', layout=1, use=('B','h0','c0','P'))
case('lstm_layout1_bidir', 'LSTM', layout=1, dirs=2, direction='bidirectional', use=('B','h0','c0','P'))
case('lstm_reverse', 'LSTM', direction='reverse', use=('B','h0','c0','P'))
case('lstm_bidir', 'LSTM', dirs=2, direction='bidirectional', use=('B','h0','c0','P'))
case('lstm_h0_only', 'LSTM', use=('B','h0','P'))
case('lstm_c0_only', 'LSTM', use=('B','c0','P'))
case('lstm_clip', 'LSTM', use=('B','h0','c0','P'), clip=0.7, scale=4.0)
case('lstm_clip_bidir', 'LSTM', dirs=2, direction='bidirectional', use=('B','h0','c0','P'), clip=0.5, scale=4.0)
case('lstm_acts_bidir', 'LSTM', dirs=2, direction='bidirectional', use=('B','h0','c0'), activations=['Sigmoid','Tanh','Tanh','Sigmoid','Relu','Tanh'])
#case('lstm_acts3_bidir', 'LSTM', dirs=2, direction='bidirectional', use=('B','h0','c0'), activations=['Sigmoid','Relu','Tanh'])
case('lstm_noB', 'LSTM', use=('h0','c0'))
case('lstm_T1', 'LSTM', T=1, use=('B','h0','c0'))
case('lstm_only_yh', 'LSTM', outs=('Y_h',), direction='reverse', use=('B',))
case('lstm_only_yc', 'LSTM', outs=('Y_c',), use=('B','h0','c0'))
# GRU
for lbr in (0, 1):
    case(f'gru_fwd_lbr{lbr}', 'GRU', use=('B','h0'), linear_before_reset=lbr)
    case(f'gru_noh0_lbr{lbr}', 'GRU', use=('B',), linear_before_reset=lbr)
    case(f'gru_noB_lbr{lbr}', 'GRU', use=('h0',), linear_before_reset=lbr)
    case(f'gru_noB_noh0_lbr{lbr}', 'GRU', use=(), linear_before_reset=lbr)
    case(f'gru_layout1_lbr{lbr}', 'GRU', layout=1, use=('B','h0'), linear_before_reset=lbr)
    case(f'gru_reverse_lbr{lbr}', 'GRU', direction='reverse', use=('B','h0'), linear_before_reset=lbr)
    case(f'gru_bidir_lbr{lbr}', 'GRU', dirs=2, direction='bidirectional', use=('B','h0'), linear_before_reset=lbr)
    case(f'gru_clip_lbr{lbr}', 'GRU', use=('B','h0'), linear_before_reset=lbr, clip=0.6, scale=4.0)
    case(f'gru_layout1_bidir_lbr{lbr}', 'GRU', dirs=2, layout=1, direction='bidirectional', use=('B','h0'), linear_before_reset=lbr)
case('gru_acts_bidir', 'GRU', dirs=2, direction='bidirectional', use=('B','h0'), activations=['Sigmoid','Tanh','Sigmoid','Relu'])
# RNN
case('rnn_fwd', 'RNN', use=('B','h0'))
case('rnn_reverse_relu', 'RNN', direction='reverse', use=('B','h0'), activations=['Relu'])
case('rnn_bidir_layout1', 'RNN', dirs=2, layout=1, direction='bidirectional', use=('B','h0'))
case('rnn_clip', 'RNN', use=('B','h0'), clip=0.5, scale=4.0)
case('rnn_noB_noh0', 'RNN', use=())
case('rnn_only_yh', 'RNN', outs=('Y_h',), dirs=2, direction='bidirectional', use=('B',))
case('lstm_clip_c0', 'LSTM', T=2, B=1, H=2, I=2, use=('c0',), clip=0.3)
