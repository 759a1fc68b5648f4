"""torchvision models through the sgmatch plugin, from Python, against eager PyTorch.

    python3 torchvision_models.py path/to/libsgmatch_torch_plugin.so

ResNet-18 and MobileNetV2 (random weights, fixed seed: nothing is downloaded) are scripted,
frozen, optimized with torch.ops.sgmatch.optimize and compared with the eager model (max error
<= 1e-4 of the largest output). The optimized ResNet-18 is saved, loaded in a new process that
has loaded the plugin, and its output compared there. A BERT-like encoder
(nn.TransformerEncoder: 2 layers, GELU, post-norm) traced with autograd on keeps the ops
PyTorch's fast path would hide; optimized, it keeps no linear, matmul, bmm or softmax outside a
fused node (two attention nodes), and scripted, the fast path is declined with its reason.
torch.ops.sgmatch.enable() then makes a frozen module run optimized without a call. Any failure
exits non-zero.
"""
import os
import subprocess
import sys
import tempfile

import torch
import torchvision

PLUGIN = sys.argv[1]
torch.ops.load_library(PLUGIN)
torch.manual_seed(0)


def relative_error(got, want):
    return ((got - want).abs().max() / want.abs().max()).item()


def fused_nodes(module):
    return sum(1 for n in module.graph.nodes() if n.kind() == "sgmatch::run")


def check(name, model, x, min_fused):
    with torch.no_grad():
        want = model(x)
    scripted = torch.jit.freeze(torch.jit.script(model))
    report = torch.ops.sgmatch.optimize(scripted._c, "onednn", [x])
    print(f"{name}:\n{report}")
    fused = fused_nodes(scripted)
    assert fused >= min_fused, f"{name}: {fused} fused nodes, expected at least {min_fused}"
    # Every aten op of these models has a translation: what is declined is a property's choice
    # (a 1x1 + depthwise pair whose input shape is unknown), never an op left untranslated.
    for line in report.splitlines():
        assert not line.strip().startswith("declined") or line.strip().startswith("declined onednn."), \
            f"{name}: an op was declined:\n{report}"
    calls_before = torch.ops.sgmatch.counters()[0]
    got = scripted(x)
    err = relative_error(got, want)
    print(f"{name}: relative error {err:.2e}")
    assert err <= 1e-4, f"{name}: relative error {err}"
    counters = torch.ops.sgmatch.counters()
    assert counters[0] - calls_before == fused, f"{name}: {counters[0] - calls_before} kernel calls for {fused} nodes"
    assert counters[5] == 0, f"{name}: {counters[5]} calls ran on TorchScript: {counters}"
    return scripted, want


def check_encoder():
    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, activation="gelu", batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    x = torch.randn(2, 16, 64)
    with torch.no_grad():
        want = model(x)
    # Traced with autograd on (the parameters require grad), PyTorch records the ops its
    # no_grad fast path (_transformer_encoder_layer_fwd) would hide; frozen without grad.
    traced = torch.jit.trace(model, x, check_trace=False)
    model.requires_grad_(False)
    frozen = torch.jit.freeze(traced)
    report = torch.ops.sgmatch.optimize(frozen._c, "onednn", [x])
    print(f"encoder:\n{report}")
    assert "onednn.attention: 2" in report, "encoder: two attention nodes expected"
    left = [n.kind() for n in frozen.graph.nodes()
            if n.kind() in ("aten::linear", "aten::matmul", "aten::bmm", "aten::softmax", "aten::baddbmm")]
    assert not left, f"encoder: left outside fused nodes: {left}"
    with torch.no_grad():
        for batch in (2, 5):  # optimized with batch 2, run on 5 too
            xb = x if batch == 2 else torch.randn(batch, 16, 64)
            wb = want if batch == 2 else model(xb)
            err = relative_error(frozen(xb), wb)
            print(f"encoder, batch {batch}: relative error {err:.2e}")
            assert err <= 1e-4, f"encoder: relative error {err}"
    # Scripted, the fast path is in the graph: declined by name, with the reason.
    scripted = torch.jit.freeze(torch.jit.script(model))
    report = torch.ops.sgmatch.optimize(scripted._c, "onednn", [x])
    assert "_transformer_encoder_layer_fwd" in report and "fast path" in report, \
        f"encoder, scripted: the fast path was not declined:\n{report}"


def main():
    check_encoder()
    x = torch.randn(2, 3, 224, 224)
    resnet = torchvision.models.resnet18().eval().requires_grad_(False)
    optimized, want = check("resnet18", resnet, x, min_fused=21)
    mobilenet = torchvision.models.mobilenet_v2().eval().requires_grad_(False)
    check("mobilenet_v2", mobilenet, torch.randn(1, 3, 224, 224), min_fused=52)

    # Saved after optimizing, loaded in a new process with the plugin: equal outputs.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "resnet18_sgmatch.pt")
        torch.jit.save(optimized, path)
        torch.save({"x": x, "want": want}, os.path.join(d, "io.pt"))
        child = f"""
import sys, torch
torch.ops.load_library({PLUGIN!r})
m = torch.jit.load({path!r})
io = torch.load({os.path.join(d, "io.pt")!r})
n = sum(1 for k in m.graph.nodes() if k.kind() == "sgmatch::run")
err = ((m(io["x"]) - io["want"]).abs().max() / io["want"].abs().max()).item()
print("loaded:", n, "fused nodes, relative error", err)
sys.exit(0 if n >= 21 and err <= 1e-4 else 1)
"""
        subprocess.run([sys.executable, "-c", child], check=True)

    # enable(): the pass registered with TorchScript; a frozen module runs optimized, no call.
    torch.ops.sgmatch.enable("onednn")
    model = torchvision.models.resnet18().eval().requires_grad_(False)
    frozen = torch.jit.freeze(torch.jit.script(model))
    x1 = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        want1 = model(x1)
    before = torch.ops.sgmatch.counters()[0]
    for _ in range(3):  # the profiling executor optimizes after its profiling runs
        got1 = frozen(x1)
    assert relative_error(got1, want1) <= 1e-4
    graph = torch.jit.last_executed_optimized_graph()
    ran = sum(1 for n in graph.nodes() if n.kind() == "sgmatch::run")
    calls = torch.ops.sgmatch.counters()[0] - before
    print(f"enable(): {ran} sgmatch::run nodes in the executed graph, {calls} kernel calls")
    assert ran >= 20 and calls >= ran, "enable(): the registered pass did not rewrite the executed graph"
    print("ok")


main()
