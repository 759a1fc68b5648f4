#!/usr/bin/python3
"""Golden outputs from an independent implementation (PyTorch) for the oneDNN lowering tests.

Run once with Debian's python3 (python3-torch), then commit the .bin files; the test command
itself needs no Python:

    /usr/bin/python3 tests/golden/make_golden.py

Each case is a conv (attributes in tensor "conv": stride, pad, dilation, groups), an optional
BatchNorm ("bn.*" tensors) and a chain of ops (empty tensors "op.<i>.<name>"); the C++ test
(tests/onednn/golden.cpp) builds the same graph from the file. File format (little-endian): b"SGG1", u32 tensor count,
then per tensor: u32 name length, name bytes, u32 rank, rank x i64 dims, f32 data.
"""
import os
import struct

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))

# name: (batch, in_c, out_c, hw, k, stride, pad, dilation, groups, bias, bn, ops)
# ops: the chain after the conv (and BN), in order.
CASES = {
    "k3_bn_relu": (1, 8, 16, 9, 3, 1, 1, 1, 1, False, True, ["relu"]),
    "k1s2_bn_add_relu": (2, 16, 8, 10, 1, 2, 0, 1, 1, False, True, ["add_residual", "relu"]),
    "dw3s2_bn_relu6": (1, 12, 12, 11, 3, 2, 1, 1, 12, False, True, ["relu6"]),
    "g2k5_bias_leaky": (1, 8, 8, 9, 5, 1, 2, 1, 2, True, False, ["leaky_relu"]),
    "k7s2_b8_swish": (8, 3, 8, 12, 7, 2, 3, 1, 1, True, False, ["swish"]),
    "k3d2_gelu_erf": (1, 6, 10, 13, 3, 1, 2, 2, 1, True, True, ["gelu_erf"]),
    "k3_hardswish_mulc": (1, 4, 8, 8, 3, 1, 1, 1, 1, False, True, ["hardswish", "mul_channel"]),
    "k3_hardsigmoid": (1, 4, 6, 7, 3, 1, 1, 1, 1, True, False, ["hardsigmoid"]),
    "k3_mish_tanh": (1, 5, 7, 6, 3, 1, 1, 1, 1, True, False, ["mish", "tanh"]),
    "k1_elu_sigmoid": (2, 6, 6, 5, 1, 1, 0, 1, 1, True, True, ["elu", "sigmoid"]),
    "k5s2_gelu_tanh_sub": (1, 4, 4, 11, 5, 2, 2, 1, 1, False, False, ["gelu_tanh", "sub_scalar"]),
}


# Matmuls and transposed convolutions, run through the ready-made backend. "main" holds
# [kind, stride, pad, dilation, groups, output_padding], kind 1 = MatMul, 2 = Gemm with transB,
# 3 = ConvTranspose. Ops ending in "_decomposed" are written out in the graph the way exporters
# emit them (the C++ test builds Div / Erf / Add / Mul ...); PyTorch computes the plain function.
# name: (kind, x shape, out features or channels, k, stride, pad, dilation, groups, output_padding, bias, bn, ops)
MAIN_CASES = {
    "mm3d_bias_gelu_erf_decomposed": (1, (4, 7, 32), 48, 0, 1, 0, 1, 1, 0, True, False, ["gelu_erf_decomposed"]),
    "gemm_t_relu_add": (2, (5, 20), 24, 0, 1, 0, 1, 1, 0, True, False, ["relu", "add_residual"]),
    "mm_bn_swish_decomposed": (1, (6, 16), 12, 0, 1, 0, 1, 1, 0, False, True, ["swish_decomposed"]),
    "mm_gelu_tanh_decomposed_tanh": (1, (3, 24), 16, 0, 1, 0, 1, 1, 0, True, False, ["gelu_tanh_decomposed", "tanh"]),
    "convT_k3s2_op1_bn_relu": (3, (2, 8, 6, 6), 4, 3, 2, 1, 1, 1, 1, True, True, ["relu"]),
    "convT_g2k4s2_hardswish_decomposed": (3, (1, 8, 5, 5), 6, 4, 2, 1, 1, 2, 0, True, False, ["hardswish_decomposed"]),
    "convT_k2s2_gelu_tanh_decomposed": (3, (1, 4, 7, 7), 8, 2, 2, 0, 1, 1, 0, False, False, ["gelu_tanh_decomposed"]),
    "convT_k3d2_bias_sigmoid_mul": (3, (2, 6, 5, 5), 6, 3, 1, 2, 2, 1, 0, True, False, ["sigmoid", "mul_channel"]),
}


def apply_op(op, y, tensors, channel_axis):
    if op == "relu":
        return F.relu(y)
    if op == "tanh":
        return torch.tanh(y)
    if op == "sigmoid":
        return torch.sigmoid(y)
    if op in ("gelu_erf_decomposed",):
        return F.gelu(y)
    if op == "gelu_tanh_decomposed":
        return F.gelu(y, approximate="tanh")
    if op == "swish_decomposed":
        return F.silu(y)
    if op == "hardswish_decomposed":
        return F.hardswish(y)
    if op == "add_residual":
        r = torch.rand_like(y) * 2 - 1
        tensors.append(("residual", r))
        return y + r
    if op == "mul_channel":
        shape = [1] * y.dim()
        shape[channel_axis] = y.shape[channel_axis]
        m = torch.rand(*shape) * 2 - 1
        tensors.append(("mul", m))
        return y * m
    raise ValueError(op)


def main_cases():
    for name, (kind, xs, o, k, s, p, d, g, op_pad, bias, bn, ops) in MAIN_CASES.items():
        x = torch.rand(*xs) * 2 - 1
        tensors = [("main", torch.tensor([float(kind), float(s), float(p), float(d), float(g), float(op_pad)])), ("x", x)]
        tensors += [("op.%d.%s" % (i, op), torch.zeros(0)) for i, op in enumerate(ops)]
        b = torch.rand(o) - 0.5 if bias else None
        if kind == 1:
            w = (torch.rand(xs[-1], o) * 2 - 1) * 0.3
            y = x @ w + (b if b is not None else 0)
            axis = y.dim() - 1
        elif kind == 2:
            w = (torch.rand(o, xs[-1]) * 2 - 1) * 0.3  # Linear's weight: [N, K], Gemm transB = 1
            y = F.linear(x, w, b)
            axis = 1
        else:
            w = (torch.rand(xs[1], o // g, k, k) * 2 - 1) * 0.5
            y = F.conv_transpose2d(x, w, b, stride=s, padding=p, output_padding=op_pad, groups=g, dilation=d)
            axis = 1
        tensors.append(("w", w))
        if b is not None:
            tensors.append(("b", b))
        if bn:  # over axis 1: the columns of a 2-D matmul, the channels of a conv
            c = y.shape[1]
            scale, shift = torch.rand(c) + 0.5, torch.rand(c) - 0.5
            mean, var = torch.rand(c) - 0.5, torch.rand(c) + 0.5
            tensors += [("bn.scale", scale), ("bn.shift", shift), ("bn.mean", mean), ("bn.var", var)]
            y = F.batch_norm(y, mean, var, scale, shift, training=False, eps=1e-5)
        for op in ops:
            y = apply_op(op, y, tensors, axis)
        tensors.append(("y", y))
        write(os.path.join(HERE, name + ".bin"), tensors)
        print(name, tuple(y.shape))


def write(path, tensors):
    with open(path, "wb") as f:
        f.write(b"SGG1")
        f.write(struct.pack("<I", len(tensors)))
        for name, t in tensors:
            t = t.detach().contiguous().to(torch.float32)
            nb = name.encode()
            f.write(struct.pack("<I", len(nb)))
            f.write(nb)
            f.write(struct.pack("<I", t.dim()))
            f.write(struct.pack("<%dq" % t.dim(), *t.shape))
            f.write(t.numpy().astype("<f4").tobytes())


def main():
    torch.manual_seed(1234)
    for name, (n, c, o, hw, k, s, p, d, g, bias, bn, ops) in CASES.items():
        x = torch.rand(n, c, hw, hw) * 2 - 1
        w = (torch.rand(o, c // g, k, k) * 2 - 1) * 0.5
        # The graph to build, for the C++ test: conv attributes, then one empty tensor per op.
        tensors = [("conv", torch.tensor([float(s), float(p), float(d), float(g)])), ("x", x), ("w", w)]
        tensors += [("op.%d.%s" % (i, op), torch.zeros(0)) for i, op in enumerate(ops)]
        b = None
        if bias:
            b = torch.rand(o) - 0.5
            tensors.append(("b", b))
        y = F.conv2d(x, w, b, stride=s, padding=p, dilation=d, groups=g)
        if bn:
            scale, shift = torch.rand(o) + 0.5, torch.rand(o) - 0.5
            mean, var = torch.rand(o) - 0.5, torch.rand(o) + 0.5
            tensors += [("bn.scale", scale), ("bn.shift", shift), ("bn.mean", mean), ("bn.var", var)]
            y = F.batch_norm(y, mean, var, scale, shift, training=False, eps=1e-5)
        for op in ops:
            if op == "relu":
                y = F.relu(y)
            elif op == "relu6":
                y = F.hardtanh(y, 0.0, 6.0)
            elif op == "leaky_relu":
                y = F.leaky_relu(y, 0.1)
            elif op == "swish":
                y = F.silu(y)
            elif op == "gelu_erf":
                y = F.gelu(y)
            elif op == "gelu_tanh":
                y = F.gelu(y, approximate="tanh")
            elif op == "hardswish":
                y = F.hardswish(y)
            elif op == "hardsigmoid":  # PyTorch's: relu6(x + 3) / 6 = alpha 1/6, beta 0.5
                y = F.hardsigmoid(y)
            elif op == "mish":
                y = F.mish(y)
            elif op == "tanh":
                y = torch.tanh(y)
            elif op == "elu":
                y = F.elu(y, 0.5)
            elif op == "sigmoid":
                y = torch.sigmoid(y)
            elif op == "add_residual":
                r = torch.rand_like(y) * 2 - 1
                tensors.append(("residual", r))
                y = y + r
            elif op == "mul_channel":
                m = torch.rand(1, o, 1, 1) * 2 - 1
                tensors.append(("mul", m))
                y = y * m
            elif op == "sub_scalar":
                y = y - 0.25
            else:
                raise ValueError(op)
        tensors.append(("y", y))
        write(os.path.join(HERE, name + ".bin"), tensors)
        print(name, tuple(y.shape))
    main_cases()


if __name__ == "__main__":
    main()
