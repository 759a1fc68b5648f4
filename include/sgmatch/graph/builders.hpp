// sgmatch/graph/builders.hpp - graphs for tests, examples and benchmarks.
//
// - chain(ops): input -> op0 -> op1 -> ...
// - a conv/bn/relu layer builder with real attributes, weights and shapes (conv_layer)
// - resnet50(): a ResNet-50-shaped graph (stem, 16 bottleneck blocks in stages of 3/4/6/3,
//   classifier) with the real layer shapes of torchvision's resnet50 at 224x224
// - resnet_blocks(n): n bottleneck blocks in a row, for large graphs (a downsampling block
//   every 8 blocks)
// - random_dag(n, seed): each node takes 1-3 inputs, mostly from the previous 64 nodes, with a
//   few long-range edges; ops drawn from a given list
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace build {

/// input -> ops[0] -> ops[1] -> ... ; the last node is a graph output. Returns the op nodes.
inline std::vector<node_id> chain(graph& g, const std::vector<std::string>& ops,
                                  std::string_view prefix = "n") {
    std::vector<node_id> out;
    node_id prev = g.add_input(std::string(prefix) + "_in", tensor_type{dtype::f32, {1, 8, 4, 4}});
    for (std::size_t i = 0; i < ops.size(); ++i) {
        prev = g.add_op(ops[i], std::string(prefix) + std::to_string(i), {prev});
        g.set_type(value_ref<node_id>{prev, 0}, tensor_type{dtype::f32, {1, 8, 4, 4}});
        out.push_back(prev);
    }
    if (!out.empty()) g.mark_output(out.back());
    return out;
}

/// A 4-D activation: batch, channels, height, width.
struct act {
    node_id node;
    std::int64_t n, c, h, w;
};

/// Builds conv / bn / relu / add layers with real attributes and shapes.
class layers {
public:
    /// With params, convs get a weights constant and BatchNorms their four parameters. With a
    /// non-zero data_seed, the weights hold values too (He-scaled, seeded: same seed, same
    /// values) and BatchNorm parameters vary per channel; otherwise weights are shape-only.
    explicit layers(graph& g, bool params = true, std::uint64_t data_seed = 0)
        : g_(g), params_(params), data_(data_seed != 0), rng_(data_seed) {}

    /// n values uniform in [lo, hi) from the builder's seeded generator.
    std::vector<float> values(std::size_t n, float lo, float hi) {
        std::uniform_real_distribution<float> d(lo, hi);
        std::vector<float> v(n);
        for (auto& x : v) x = d(rng_);
        return v;
    }

    act conv(const std::string& name, act x, std::int64_t out_c, std::int64_t k, std::int64_t stride,
             std::int64_t pad, std::int64_t group = 1) {
        const std::int64_t oh = (x.h + 2 * pad - k) / stride + 1;
        const std::int64_t ow = (x.w + 2 * pad - k) / stride + 1;
        std::vector<input_ref> ins{x.node};
        if (params_) {
            std::vector<float> w;
            if (data_) {  // He-uniform: keeps activations of deep stacks bounded
                const float bound = std::sqrt(6.0f / static_cast<float>(x.c / group * k * k));
                w = values(static_cast<std::size_t>(out_c * (x.c / group) * k * k), -bound, bound);
            }
            ins.push_back(g_.add_constant(name + ".weight", {out_c, x.c / group, k, k}, std::move(w)));
        }
        node_id c = g_.add_op("Conv", name, ins,
                              {{"kernel_shape", attribute::ints{k, k}},
                               {"strides", attribute::ints{stride, stride}},
                               {"pads", attribute::ints{pad, pad, pad, pad}},
                               {"dilations", attribute::ints{1, 1}},
                               {"group", group}});
        g_.set_type({c, 0}, tensor_type{dtype::f32, {x.n, out_c, oh, ow}});
        return act{c, x.n, out_c, oh, ow};
    }

    act bn(const std::string& name, act x) {
        std::vector<input_ref> ins{x.node};
        if (params_) {
            const auto c = static_cast<std::size_t>(x.c);
            std::vector<float> one(c, 1.0f), zero(c, 0.0f);
            ins.push_back(g_.add_constant(name + ".scale", {x.c}, data_ ? values(c, 0.5f, 1.0f) : one));
            ins.push_back(g_.add_constant(name + ".bias", {x.c}, data_ ? values(c, -0.2f, 0.2f) : zero));
            ins.push_back(g_.add_constant(name + ".mean", {x.c}, data_ ? values(c, -0.2f, 0.2f) : zero));
            ins.push_back(g_.add_constant(name + ".var", {x.c}, data_ ? values(c, 0.5f, 1.5f) : one));
        }
        node_id b = g_.add_op("BatchNormalization", name, ins, {{"epsilon", 1e-5}});
        return same(b, x);
    }

    act unary(const std::string& op, const std::string& name, act x) {
        return same(g_.add_op(op, name, {x.node}), x);
    }
    act relu(const std::string& name, act x) { return unary("Relu", name, x); }
    act add(const std::string& name, act a, act b) { return same(g_.add_op("Add", name, {a.node, b.node}), a); }

    act maxpool(const std::string& name, act x, std::int64_t k, std::int64_t s, std::int64_t p) {
        node_id m = g_.add_op("MaxPool", name, {x.node},
                              {{"kernel_shape", attribute::ints{k, k}},
                               {"strides", attribute::ints{s, s}},
                               {"pads", attribute::ints{p, p, p, p}}});
        const std::int64_t oh = (x.h + 2 * p - k) / s + 1, ow = (x.w + 2 * p - k) / s + 1;
        g_.set_type({m, 0}, tensor_type{dtype::f32, {x.n, x.c, oh, ow}});
        return act{m, x.n, x.c, oh, ow};
    }

    /// A ResNet bottleneck: 1x1 -> 3x3 (stride) -> 1x1 (x4), with a projection shortcut when
    /// the shape changes. Names follow torchvision (layerL.B.conv1 ...).
    act bottleneck(const std::string& name, act x, std::int64_t width, std::int64_t stride) {
        const std::int64_t out_c = width * 4;
        act y = relu(name + ".relu1", bn(name + ".bn1", conv(name + ".conv1", x, width, 1, 1, 0)));
        y = relu(name + ".relu2", bn(name + ".bn2", conv(name + ".conv2", y, width, 3, stride, 1)));
        y = bn(name + ".bn3", conv(name + ".conv3", y, out_c, 1, 1, 0));
        act shortcut = x;
        if (stride != 1 || x.c != out_c)
            shortcut = bn(name + ".downsample.1", conv(name + ".downsample.0", x, out_c, 1, stride, 0));
        return relu(name + ".relu3", add(name + ".add", y, shortcut));
    }

    graph& g() { return g_; }

private:
    act same(node_id n, act x) {
        g_.set_type({n, 0}, tensor_type{dtype::f32, {x.n, x.c, x.h, x.w}});
        x.node = n;
        return x;
    }
    graph& g_;
    bool params_;
    bool data_;
    std::mt19937_64 rng_;
};

/// ResNet-50 at image x image (torchvision layout): 53 convs, 53 batch norms, 16 residual adds.
/// With a non-zero data_seed every weight holds values (see layers), so the graph can run.
inline graph resnet50(std::int64_t batch = 1, std::int64_t image = 224, std::uint64_t data_seed = 0) {
    graph g;
    layers L(g, true, data_seed);
    act x{g.add_input("data", tensor_type{dtype::f32, {batch, 3, image, image}}), batch, 3, image, image};
    x = L.relu("relu", L.bn("bn1", L.conv("conv1", x, 64, 7, 2, 3)));
    x = L.maxpool("maxpool", x, 3, 2, 1);
    const int blocks[] = {3, 4, 6, 3};
    const std::int64_t widths[] = {64, 128, 256, 512};
    for (int s = 0; s < 4; ++s)
        for (int b = 0; b < blocks[s]; ++b)
            x = L.bottleneck("layer" + std::to_string(s + 1) + "." + std::to_string(b), x, widths[s],
                             (b == 0 && s > 0) ? 2 : 1);
    node_id pool = g.add_op("GlobalAveragePool", "avgpool", {x.node});
    g.set_type({pool, 0}, tensor_type{dtype::f32, {batch, x.c, 1, 1}});
    node_id flat = g.add_op("Flatten", "flatten", {pool}, {{"axis", 1}});
    g.set_type({flat, 0}, tensor_type{dtype::f32, {batch, x.c}});
    const float bound = 1.0f / std::sqrt(static_cast<float>(x.c));
    node_id w = g.add_constant("fc.weight", {1000, x.c},
                               data_seed ? L.values(static_cast<std::size_t>(1000 * x.c), -bound, bound) : std::vector<float>{});
    node_id bias = g.add_constant("fc.bias", {1000}, data_seed ? L.values(1000, -bound, bound) : std::vector<float>{});
    node_id fc = g.add_op("Gemm", "fc", {flat, w, bias}, {{"transB", 1}});
    g.set_type({fc, 0}, tensor_type{dtype::f32, {batch, 1000}});
    g.mark_output(fc);
    return g;
}

/// `blocks` bottleneck blocks of width 64 at 56x56 in a row (a projection block every 8), for
/// large graphs. With params, a block is about 27 nodes (10 of them ops).
inline graph resnet_blocks(std::size_t blocks, bool params = true) {
    graph g;
    layers L(g, params);
    act x{g.add_input("data", tensor_type{dtype::f32, {1, 256, 56, 56}}), 1, 256, 56, 56};
    for (std::size_t b = 0; b < blocks; ++b) {
        const bool project = b % 8 == 0;
        // A projection block keeps the shape but uses a conv shortcut (as in a stage's first block).
        const std::string name = "block" + std::to_string(b);
        if (project) {
            act y = L.relu(name + ".relu1", L.bn(name + ".bn1", L.conv(name + ".conv1", x, 64, 1, 1, 0)));
            y = L.relu(name + ".relu2", L.bn(name + ".bn2", L.conv(name + ".conv2", y, 64, 3, 1, 1)));
            y = L.bn(name + ".bn3", L.conv(name + ".conv3", y, 256, 1, 1, 0));
            act sc = L.bn(name + ".downsample.1", L.conv(name + ".downsample.0", x, 256, 1, 1, 0));
            x = L.relu(name + ".relu3", L.add(name + ".add", y, sc));
        } else {
            x = L.bottleneck(name, x, 64, 1);
        }
    }
    g.mark_output(x.node);
    return g;
}

struct random_dag_options {
    std::vector<std::string> ops = {"Conv", "BatchNormalization", "Relu", "Add", "Mul", "Sigmoid",
                                    "MaxPool", "Concat"};
    std::size_t window = 64;        // inputs mostly from the previous `window` nodes
    double long_range = 0.02;       // chance that an input comes from anywhere earlier
    std::size_t inputs = 2;         // graph inputs
};

/// A random DAG of `n` op nodes (plus a few graph inputs). Same seed, same graph.
inline graph random_dag(std::size_t n, std::uint64_t seed, const random_dag_options& o = {}) {
    graph g;
    std::mt19937_64 rng(seed);
    std::vector<node_id> all;
    for (std::size_t i = 0; i < o.inputs; ++i)
        all.push_back(g.add_input("in" + std::to_string(i), tensor_type{dtype::f32, {1, 8, 4, 4}}));
    std::uniform_int_distribution<std::size_t> pick_op(0, o.ops.size() - 1);
    std::uniform_int_distribution<int> pick_arity(1, 3);
    std::uniform_real_distribution<double> coin(0.0, 1.0);
    for (std::size_t i = 0; i < n; ++i) {
        const int arity = pick_arity(rng);
        std::vector<input_ref> ins;
        for (int a = 0; a < arity; ++a) {
            const std::size_t have = all.size();
            std::size_t j;
            if (coin(rng) < o.long_range) {
                j = std::uniform_int_distribution<std::size_t>(0, have - 1)(rng);
            } else {
                const std::size_t lo = have > o.window ? have - o.window : 0;
                j = std::uniform_int_distribution<std::size_t>(lo, have - 1)(rng);
            }
            ins.push_back(all[j]);
        }
        std::string name = "v";  // not "v" + to_string(i): g++ 12 -O3 -std=c++20 warns (-Wrestrict, a false positive)
        name += std::to_string(i);
        all.push_back(g.add_op(o.ops[pick_op(rng)], name, ins));
    }
    g.mark_output(all.back());
    return g;
}

}  // namespace build
SGMATCH_END_NAMESPACE
