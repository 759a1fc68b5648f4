"""The plugin built by an installed sgmatch's sgmatch_add_torch_plugin, loaded by Python: a
scripted conv + relu optimized into one sgmatch::run node, its output PyTorch's.

    python3 torch_plugin.py libconsumer_torch_plugin.so
"""
import sys

import torch

torch.ops.load_library(sys.argv[1])
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU()).eval().requires_grad_(False)
x = torch.randn(1, 3, 16, 16)
with torch.no_grad():
    want = net(x)
m = torch.jit.freeze(torch.jit.script(net))
print(torch.ops.sgmatch.optimize(m._c))
fused = sum(1 for n in m.graph.nodes() if n.kind() == "sgmatch::run")
err = ((m(x) - want).abs().max() / want.abs().max()).item()
print(f"{fused} fused node, relative error {err:.2e}")
sys.exit(0 if fused == 1 and err <= 1e-4 else 1)
