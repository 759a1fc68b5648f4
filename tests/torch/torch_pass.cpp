// The TorchScript host: modules defined in TorchScript (no Python), optimized through the view,
// run by the sgmatch::run kernel and compared with the unoptimized module's output.
// Torch first: its glog defines CHECK and CHECK_EQ..., which doctest's take over below.
#include <torch/script.h>
#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LE
#undef CHECK_LT
#undef CHECK_GE
#undef CHECK_GT
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "sgmatch/torch/library.hpp"
#include "support/adapter_laws.hpp"

SGMATCH_TORCH_LIBRARY()

namespace {

namespace tj = ::torch::jit;

// A module with the named float parameters (random, fixed seed) and `forward` as given.
tj::Module make_module(const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& params, const std::string& code,
                       std::uint64_t seed = 7) {
    ::torch::manual_seed(seed);
    tj::Module m("M");
    for (const auto& [name, dims] : params) {
        at::Tensor t = ::torch::randn(dims);
        if (name.find("var") != std::string::npos) t = t.abs() + 0.5;
        m.register_buffer(name, t);
    }
    m.define(code);
    m.eval();
    return m;
}

at::Tensor forward(tj::Module& m, const std::vector<at::Tensor>& xs) {
    std::vector<c10::IValue> in(xs.begin(), xs.end());
    return m.forward(in).toTensor();
}

// |a - b| <= 1e-4 * max|b|, elementwise.
void check_close(const at::Tensor& got, const at::Tensor& want) {
    REQUIRE(got.sizes() == want.sizes());
    const double scale = std::max(want.abs().max().item<double>(), 1e-12);
    const double err = (got - want).abs().max().item<double>();
    CHECK_MESSAGE(err <= 1e-4 * scale, "max error " << err << " against max |value| " << scale);
}

std::size_t count_kind(const tj::Block* b, const char* kind) {
    std::size_t n = 0;
    const auto k = c10::Symbol::fromQualString(kind);
    for (const tj::Node* x : b->nodes()) {
        n += x->kind() == k;
        for (const tj::Block* sub : x->blocks()) n += count_kind(sub, kind);
    }
    return n;
}

// Optimizes a frozen copy of m and compares its output with m's on xs; returns the report.
sgmatch::torch::report optimized_matches(tj::Module& m, const std::vector<at::Tensor>& xs, const sgmatch::torch::options& opt = {}) {
    const at::Tensor want = forward(m, xs);
    tj::Module f = tj::freeze_module(m);
    const sgmatch::torch::report r = sgmatch::torch::optimize(f, opt);
    INFO(r.text());
    INFO(*f.get_method("forward").graph());
    CHECK(count_kind(f.get_method("forward").graph()->block(), "sgmatch::run") == r.fused);
    const at::Tensor got = forward(f, xs);
    check_close(got, want);
    return r;
}

std::size_t fused_by(const sgmatch::torch::report& r, const char* property) {
    const auto it = r.fused_by.find(property);
    return it == r.fused_by.end() ? 0 : it->second;
}

const std::vector<std::pair<std::string, std::vector<std::int64_t>>> conv_bn = {
    {"w", {8, 8, 3, 3}}, {"b", {8}}, {"g", {8}}, {"beta", {8}}, {"mean", {8}}, {"var", {8}}};
const char* const conv_bn_relu = R"(
def forward(self, x):
    y = torch.conv2d(x, self.w, self.b, [1, 1], [1, 1], [1, 1], 1)
    y = torch.batch_norm(y, self.g, self.beta, self.mean, self.var, False, 0.1, 1e-5, False)
    return torch.relu(y)
)";

}  // namespace

TEST_CASE("torch: conv + batch_norm + relu becomes one fused node") {
    tj::Module m = make_module(conv_bn, conv_bn_relu);
    const auto r = optimized_matches(m, {::torch::randn({2, 8, 10, 10})});
    CHECK(r.fused == 1);
    CHECK(r.fused_by.count("onednn.conv_post_ops") == 1);
    CHECK(r.nodes_after < r.nodes_before);
}

TEST_CASE("torch: a residual block with add_ and relu_ fuses conv, bn, the add and the relu") {
    tj::Module m = make_module(conv_bn, R"(
def forward(self, x):
    y = torch.conv2d(x, self.w, self.b, [1, 1], [1, 1], [1, 1], 1)
    y = torch.batch_norm(y, self.g, self.beta, self.mean, self.var, False, 0.1, 1e-5, False)
    y += x
    y.relu_()
    return y
)");
    const auto r = optimized_matches(m, {::torch::randn({1, 8, 12, 12})});
    CHECK(r.fused == 1);
    CHECK(r.blocks_left.empty());
}

TEST_CASE("torch: relu(conv(x) + x), the conv's input also the sum's other operand") {
    tj::Module m = make_module({{"w", {4, 4, 3, 3}}, {"b", {4}}}, R"(
def forward(self, x):
    return torch.relu(torch.conv2d(x, self.w, self.b, [1, 1], [1, 1], [1, 1], 1) + x)
)");
    const auto r = optimized_matches(m, {::torch::randn({1, 4, 9, 9})});
    CHECK(r.fused == 1);
}

TEST_CASE("torch: a frozen linear + gelu is one matmul with post-ops, on a 2-D or a 3-D input") {
    tj::Module m = make_module({{"w", {16, 32}}, {"b", {16}}}, R"(
def forward(self, x):
    return torch.gelu(torch.linear(x, self.w, self.b))
)");
    // The frozen linear becomes matmul(x, W^T) + b (FrozenLinearTranspose), which needs no rank.
    for (const at::Tensor& x : {::torch::randn({5, 32}), ::torch::randn({2, 7, 32})}) {
        const auto r = optimized_matches(m, {x});
        CHECK(r.fused == 1);
        CHECK(r.fused_by.count("onednn.matmul_post_ops") == 1);
        CHECK(r.declined.empty());
    }
    // One node made for a 2-D input runs on other sizes and another rank.
    tj::Module f = tj::freeze_module(m);
    sgmatch::torch::optimize(f);
    for (const at::Tensor& x : {::torch::randn({9, 32}), ::torch::randn({3, 4, 32})}) check_close(forward(f, {x}), forward(m, {x}));
}

TEST_CASE("torch: a linear whose weight is not a constant is declined with the reason") {
    auto g = std::make_shared<tj::Graph>();
    tj::parseIR(R"IR(
graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %none : str = prim::Constant[value="none"]()
  %y : Tensor = aten::linear(%x, %w, %b)
  %z : Tensor = aten::gelu(%y, %none)
  return (%z)
)IR", g.get());
    const auto unknown = sgmatch::torch::optimize(g);
    CHECK(unknown.fused == 0);
    REQUIRE(unknown.declined.size() == 1);
    CHECK(unknown.declined[0].second.find("unknown rank") != std::string::npos);
    sgmatch::torch::options shaped;
    shaped.example_inputs = {::torch::randn({5, 32}), ::torch::randn({16, 32}), ::torch::randn({16})};
    // With the rank known the linear is a Gemm, which the fused kernel takes only with a constant
    // weight: declined by the property, with its reason.
    const auto r = sgmatch::torch::optimize(g, shaped);
    INFO(r.text());
    CHECK(r.fused == 0);
    REQUIRE(r.declined.size() == 1);
    CHECK(r.declined[0].second.find("not a 2-D constant") != std::string::npos);
}

// BERT's self-attention block as a user writes it: projections of a [B, L, 32] input, split into
// 4 heads by view (sizes computed at run time) and transpose, scores scaled by a number,
// softmax, the heads merged back, the output projection, a residual add and layer_norm.
const std::vector<std::pair<std::string, std::vector<std::int64_t>>> attention_params = {
    {"wq", {32, 32}}, {"bq", {32}}, {"wk", {32, 32}}, {"bk", {32}}, {"wv", {32, 32}}, {"bv", {32}},
    {"wo", {32, 32}}, {"bo", {32}}, {"g", {32}}, {"beta", {32}}};
const char* const attention_block = R"(
def forward(self, x):
    B = x.size(0)
    L = x.size(1)
    q = torch.linear(x, self.wq, self.bq).view(B, L, 4, 8).transpose(1, 2)
    k = torch.linear(x, self.wk, self.bk).view(B, L, 4, 8).transpose(1, 2)
    v = torch.linear(x, self.wv, self.bv).view(B, L, 4, 8).transpose(1, 2)
    s = torch.matmul(q, k.transpose(-2, -1)) / 2.8284271247461903
    p = torch.softmax(s, -1)
    o = torch.matmul(p, v).transpose(1, 2).reshape(B, L, 32)
    y = torch.linear(o, self.wo, self.bo) + x
    return torch.layer_norm(y, [32], self.g, self.beta, 1e-5, True)
)";

TEST_CASE("torch: multi-head attention written out: one attention node, the projections fused") {
    tj::Module m = make_module(attention_params, attention_block);
    const at::Tensor x = ::torch::randn({2, 6, 32});
    sgmatch::torch::options shaped;
    shaped.example_inputs = {x};
    for (const sgmatch::torch::options& opt : {sgmatch::torch::options{}, shaped}) {
        const auto r = optimized_matches(m, {x}, opt);
        CHECK(fused_by(r, "onednn.attention") == 1);
        CHECK(fused_by(r, "onednn.matmul_post_ops") == 4);  // q, k, v; the output's with the residual add
        CHECK(r.fused == 5);
    }
    // The optimized graph keeps no matmul or softmax of its own; it runs at other sizes.
    tj::Module f = tj::freeze_module(m);
    sgmatch::torch::optimize(f);
    const auto g = f.get_method("forward").graph();
    CHECK(count_kind(g->block(), "aten::matmul") == 0);
    CHECK(count_kind(g->block(), "aten::softmax") == 0);
    CHECK(count_kind(g->block(), "aten::linear") == 0);
    const at::Tensor x2 = ::torch::randn({3, 11, 32});
    check_close(forward(f, {x2}), forward(m, {x2}));
}

TEST_CASE("torch: PyTorch's fused fast paths and baddbmm are declined with their reasons") {
    auto g = std::make_shared<tj::Graph>();
    tj::parseIR(R"IR(
graph(%x : Tensor, %a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::baddbmm(%x, %a, %b, %one, %one)
  %z : Tensor = aten::relu(%y)
  return (%z)
)IR", g.get());
    const auto r = sgmatch::torch::optimize(g);
    CHECK(r.fused == 0);
    REQUIRE(r.declined.size() == 1);
    CHECK(r.declined[0].second.find("two ops") != std::string::npos);
    // The encoder layer's and attention's fast paths (what PyTorch 1.13 runs under no_grad) are
    // one opaque kernel each.
    for (const char* kind : {"aten::_transformer_encoder_layer_fwd", "aten::_native_multi_head_attention"}) {
        tj::Node* n = g->create(c10::Symbol::fromQualString(kind), 1);
        const sgmatch::torch::translation t = sgmatch::torch::translate(n);
        CHECK_FALSE(t.translated());
        CHECK(t.declined.find("fast path") != std::string::npos);
        n->destroy();
    }
}

TEST_CASE("torch: average pooling and mean, as DenseNet's transitions and heads use them, inside a region") {
    tj::Module m = make_module({{"w", {6, 3, 3, 3}}, {"b", {6}}}, R"(
def forward(self, x):
    y = torch.relu(torch.conv2d(x, self.w, self.b, [1, 1], [1, 1], [1, 1], 1))
    a = torch.avg_pool2d(y, [2, 2], [2, 2], [0, 0], False, True, None)
    c = torch.avg_pool2d(y, [3, 3], [2, 2], [1, 1], True, False, None)
    return torch.mean(a, [2, 3], False) + torch.mean(c, [2, 3], False)
)");
    sgmatch::torch::options regions;
    regions.backend = "onednn.regions";
    const at::Tensor x = ::torch::randn({2, 3, 11, 11});  // odd sizes: the ceil_mode window overhangs
    const auto r = optimized_matches(m, {x}, regions);
    CHECK(r.fused == 1);
    CHECK(r.declined.empty());
    tj::Module f = tj::freeze_module(m);
    sgmatch::torch::optimize(f, regions);
    const auto g = f.get_method("forward").graph();
    CHECK(count_kind(g->block(), "aten::avg_pool2d") == 0);
    CHECK(count_kind(g->block(), "aten::mean") == 0);
    const at::Tensor x2 = ::torch::randn({1, 3, 14, 9});
    check_close(forward(f, {x2}), forward(m, {x2}));
}

TEST_CASE("torch: cat + conv") {
    tj::Module m = make_module({{"w", {6, 6, 1, 1}}}, R"(
def forward(self, x, z):
    y = torch.cat([x, z], 1)
    return torch.relu(torch.conv2d(y, self.w, None, [1, 1], [0, 0], [1, 1], 1))
)");
    const auto r = optimized_matches(m, {::torch::randn({1, 2, 5, 5}), ::torch::randn({1, 4, 5, 5})});
    CHECK(r.fused == 1);
    sgmatch::torch::options regions;
    regions.backend = "onednn.regions";
    const auto rr = optimized_matches(m, {::torch::randn({1, 2, 5, 5}), ::torch::randn({1, 4, 5, 5})}, regions);
    CHECK(rr.fused == 1);
    CHECK(rr.fused_by.count("onednn.regions") == 1);
}

TEST_CASE("torch: an If whose branches hold convs is rewritten inside each branch") {
    tj::Module m = make_module({{"w", {4, 4, 3, 3}}, {"b", {4}}, {"w2", {4, 4, 1, 1}}}, R"(
def forward(self, x, flag: bool):
    if flag:
        y = torch.relu(torch.conv2d(x, self.w, self.b, [1, 1], [1, 1], [1, 1], 1))
    else:
        y = torch.sigmoid(torch.conv2d(x, self.w2, None, [1, 1], [0, 0], [1, 1], 1))
    return y + x
)");
    const at::Tensor x = ::torch::randn({1, 4, 6, 6});
    for (bool flag : {true, false}) {
        std::vector<c10::IValue> in{x, flag};
        const at::Tensor want = m.forward(in).toTensor();
        tj::Module f = tj::freeze_module(m);
        const auto r = sgmatch::torch::optimize(f);
        INFO(r.text());
        CHECK(r.fused == 2);
        check_close(f.forward(in).toTensor(), want);
    }
}

TEST_CASE("torch: forms the kernels do not implement are declined with their reason") {
    tj::Module m = make_module({{"w", {4, 4, 3, 3}}, {"g", {4}}, {"beta", {4}}, {"mean", {4}}, {"var", {4}}}, R"(
def forward(self, x):
    y = torch.conv2d(x, self.w, None, [1, 1], "same", [1, 1], 1)
    y = torch.relu(y)
    z = torch.batch_norm(x, self.g, self.beta, self.mean, self.var, True, 0.1, 1e-5, False)
    return torch.relu(z) + y
)");
    tj::Module f = tj::freeze_module(m);
    const auto r = sgmatch::torch::optimize(f);
    INFO(r.text());
    CHECK(r.fused == 0);
    bool padding = false, training = false;
    for (const auto& [node, why] : r.declined) {
        padding = padding || why.find("padding given as a string ('same')") != std::string::npos;
        training = training || why.find("training mode") != std::string::npos;
    }
    CHECK(padding);
    CHECK(training);
}

TEST_CASE("torch: a module saved after optimizing loads and runs with equal outputs") {
    tj::Module m = make_module(conv_bn, conv_bn_relu);
    const at::Tensor x = ::torch::randn({1, 8, 7, 7});
    const at::Tensor want = forward(m, {x});
    tj::Module f = tj::freeze_module(m);
    REQUIRE(sgmatch::torch::optimize(f).fused == 1);
    std::stringstream file;
    f.save(file);
    tj::Module loaded = tj::load(file);
    CHECK(count_kind(loaded.get_method("forward").graph()->block(), "sgmatch::run") == 1);
    check_close(forward(loaded, {x}), want);
}

TEST_CASE("torch: the view of a TorchScript graph obeys the adapter laws") {
    tj::Module m = make_module(conv_bn, R"(
def forward(self, x, flag: bool):
    y = torch.conv2d(x, self.w, self.b, [1, 1], [1, 1], [1, 1], 1)
    y = torch.batch_norm(y, self.g, self.beta, self.mean, self.var, False, 0.1, 1e-5, False)
    if flag:
        y = torch.relu(y) + x
    z = torch.cat([y, x], 1)
    return z[:, 1:]
)");
    tj::Module f = tj::freeze_module(m);
    const auto g = f.get_method("forward").graph();
    sgmatch::torch::view v(g->block());
    sgtest::check_adapter_laws(v);
    // The If reads x and y from outside its blocks: both are its inputs.
    for (std::uint32_t n : v.order())
        if (v.op_name(n) == "prim::If") CHECK(v.inputs(n).size() == 3);
    // Inside the branch, x and y are inputs of the nested block's view.
    for (const tj::Node* n : g->nodes())
        if (n->kind() == c10::prim::If) {
            sgmatch::torch::view inner(const_cast<tj::Block*>(n->blocks()[0]));
            sgtest::check_adapter_laws(inner);
        }
}

TEST_CASE("torch: a small scripted CNN saved by PyTorch, loaded through torch::jit::load") {
    // tests/torch/make_small_model.py wrote it: conv-bn-relu6, max pool, a residual block, a 1x1
    // conv + hardswish, global average pool, flatten, linear.
    tj::Module m = tj::load(SGMATCH_TORCH_DATA "/small_convnet.pt");
    m.eval();
    const at::Tensor x = ::torch::randn({2, 3, 32, 32});
    at::Tensor want;
    {
        ::torch::NoGradGuard no_grad;
        want = forward(m, {x});
    }
    // Everything fuses, the linear too (its input is a flatten: 2-D).
    tj::Module f = tj::freeze_module(m);
    const auto r = sgmatch::torch::optimize(f);
    INFO(r.text());
    // stem conv+bn+relu6, conv+bn+relu, conv+bn+add+relu, 1x1 conv+hardswish, linear
    CHECK(r.fused == 5);
    CHECK(r.fused_by.count("onednn.conv_post_ops") == 1);
    CHECK(r.fused_by.at("onednn.conv_post_ops") == 4);
    CHECK(r.fused_by.count("onednn.matmul_post_ops") == 1);
    for (const auto& d : r.declined) CHECK_MESSAGE(d.first.rfind("onednn.", 0) == 0, d.first << ": " << d.second);
    check_close(forward(f, {x}), want);
}

TEST_CASE("torch: what the kernels refuse at run time runs on TorchScript, counted") {
    tj::Module m = make_module({{"w", {4, 4, 3, 3}}, {"b", {4}}}, R"(
def forward(self, x):
    return torch.relu(torch.conv2d(x, self.w, self.b, [1, 1], [1, 1], [1, 1], 1))
)");
    tj::Module f = tj::freeze_module(m);
    REQUIRE(sgmatch::torch::optimize(f).fused == 1);
    auto& c = sgmatch::torch::run_counters::instance();
    const std::size_t native = c.native_runs, refusals = c.refusals;
    // A non-contiguous input: made contiguous, run by sgmatch.
    const at::Tensor wide = ::torch::randn({1, 4, 7, 14});
    const at::Tensor strided = wide.slice(3, 0, 14, 2);
    REQUIRE(!strided.is_contiguous());
    const std::size_t copies = c.made_contiguous;
    check_close(forward(f, {strided}), forward(m, {strided}));
    CHECK(c.made_contiguous == copies + 1);
    CHECK(c.native_runs == native);
    // Autograd on and an input that requires grad: TorchScript runs it, and the gradient flows.
    const at::Tensor x = ::torch::randn({1, 4, 6, 6}).requires_grad_(true);
    const at::Tensor y = forward(f, {x});
    CHECK(c.native_runs == native + 1);
    y.sum().backward();
    REQUIRE(x.grad().defined());
    CHECK(x.grad().abs().sum().item<double>() > 0);
    CHECK(c.refusals == refusals);  // the grad path is not a refusal: nothing logged
}

TEST_CASE("torch: a list appended to, as DenseNet builds its features, is never read as the list it started as") {
    tj::Module m = make_module({{"w", {4, 4, 3, 3}}, {"b", {4}}}, R"(
def forward(self, x):
    feats = [x]
    y = torch.relu(torch.conv2d(x, self.w, self.b, [1, 1], [1, 1], [1, 1], 1))
    feats.append(y)
    print(y.sum() > 1e30)
    return torch.cat(feats, 1)
)");
    const auto r = optimized_matches(m, {::torch::randn({1, 4, 5, 5})});
    CHECK(r.fused == 1);  // the conv and its relu; the cat reads the appended list
    CHECK(r.blocks_left.empty());
    bool cat = false;
    for (const auto& [node, why] : r.declined) cat = cat || why.find("aten::cat: a tensor list read or changed elsewhere too") != std::string::npos;
    CHECK(cat);
}
