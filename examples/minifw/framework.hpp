// examples/minifw/framework.hpp - a small deep-learning framework of its own, written the way
// MXNet's classic executor is, and deliberately unlike sgmatch's graph: heap nodes linked by
// pointers, MXNet op names and string attributes ("Convolution", kernel="(3, 3)",
// act_type="relu"), parameters bound to variables, an operator registry of compute functions,
// naive loop kernels, and an executor that walks the graph from its outputs. It knows nothing
// about sgmatch: the integrations (mxnet_style.hpp, ngraph_style.hpp, ort_style.hpp) plug in
// through its operator registry and its graph, as they would in the frameworks they reproduce.
#pragma once

#include <algorithm>
#include <any>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace minifw {

struct Tensor {
    std::vector<std::int64_t> shape;
    std::vector<float> data;

    static Tensor zeros(std::vector<std::int64_t> s) {
        std::int64_t n = 1;
        for (auto d : s) n *= d;
        return Tensor{std::move(s), std::vector<float>(static_cast<std::size_t>(n), 0.0f)};
    }
};

struct Node;
struct Entry {
    Node* node = nullptr;
    int index = 0;
};

struct Node {
    std::string op;  // "null": a variable (a data input, or a parameter when `param` is bound)
    std::string name;
    std::map<std::string, std::string> attrs;  // MXNet style: every attribute a string
    std::vector<Entry> inputs;
    std::shared_ptr<const Tensor> param;  // a bound parameter's value
    std::shared_ptr<const void> state;    // an operator's state kept between runs (subgraph ops)
    std::any parsed;                      // an op's parsed parameters, opaque to the framework (MXNet's
                                          // NodeAttrs::parsed)
    int num_outputs = 1;
};

struct Graph {
    std::vector<std::unique_ptr<Node>> nodes;  // owns every node, in no particular order
    std::vector<Entry> outputs;

    Node* variable(std::string name, std::shared_ptr<const Tensor> param = nullptr) {
        auto n = std::make_unique<Node>();
        n->op = "null";
        n->name = std::move(name);
        n->param = std::move(param);
        nodes.push_back(std::move(n));
        return nodes.back().get();
    }
    Node* op(std::string op, std::string name, std::vector<Entry> inputs, std::map<std::string, std::string> attrs = {}) {
        auto n = std::make_unique<Node>();
        n->op = std::move(op);
        n->name = std::move(name);
        n->inputs = std::move(inputs);
        n->attrs = std::move(attrs);
        nodes.push_back(std::move(n));
        return nodes.back().get();
    }
};

/// An operator's compute function (MXNet's FCompute): the node, its input tensors; its outputs.
using FCompute = std::function<std::vector<Tensor>(const Node&, const std::vector<const Tensor*>&)>;

/// The operator registry: op name -> compute. Extensions register their own ops here.
inline std::map<std::string, FCompute>& op_registry() {
    static std::map<std::string, FCompute> r;
    return r;
}

// ---- attributes, as MXNet writes them ----

inline std::vector<std::int64_t> ints_attr(const Node& n, const std::string& key, std::vector<std::int64_t> def) {
    auto it = n.attrs.find(key);
    if (it == n.attrs.end()) return def;
    std::vector<std::int64_t> v;
    const char* p = it->second.c_str();
    while (*p) {
        char* end = nullptr;
        const long long x = std::strtoll(p, &end, 10);
        if (end == p) {
            ++p;
            continue;
        }
        v.push_back(x);
        p = end;
    }
    return v;
}
inline std::string str_attr(const Node& n, const std::string& key, std::string def) {
    auto it = n.attrs.find(key);
    return it == n.attrs.end() ? def : it->second;
}
inline bool bool_attr(const Node& n, const std::string& key, bool def) {
    const std::string s = str_attr(n, key, def ? "True" : "False");
    return s == "True" || s == "true" || s == "1";
}
inline double real_attr(const Node& n, const std::string& key, double def) {
    auto it = n.attrs.find(key);
    return it == n.attrs.end() ? def : std::strtod(it->second.c_str(), nullptr);
}

// ---- the native kernels: plain loops, NCHW ----

namespace kernels {

inline std::int64_t at4(const std::vector<std::int64_t>& s, std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    return ((a * s[1] + b) * s[2] + c) * s[3] + d;
}

inline Tensor convolution(const Node& n, const std::vector<const Tensor*>& in) {
    const Tensor& x = *in[0];
    const Tensor& w = *in[1];
    const auto k = ints_attr(n, "kernel", {});
    const auto st = ints_attr(n, "stride", {1, 1});
    const auto pd = ints_attr(n, "pad", {0, 0});
    const std::int64_t groups = ints_attr(n, "num_group", {1})[0];
    const bool bias = !bool_attr(n, "no_bias", false);
    const std::int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], O = w.shape[0];
    const std::int64_t OH = (H + 2 * pd[0] - k[0]) / st[0] + 1, OW = (W + 2 * pd[1] - k[1]) / st[1] + 1;
    const std::int64_t cg = C / groups, og = O / groups;
    Tensor y = Tensor::zeros({N, O, OH, OW});
    for (std::int64_t b = 0; b < N; ++b)
        for (std::int64_t o = 0; o < O; ++o)
            for (std::int64_t i = 0; i < OH; ++i)
                for (std::int64_t j = 0; j < OW; ++j) {
                    float acc = bias ? in[2]->data[static_cast<std::size_t>(o)] : 0.0f;
                    const std::int64_t g = o / og;
                    for (std::int64_t c = 0; c < cg; ++c)
                        for (std::int64_t p = 0; p < k[0]; ++p)
                            for (std::int64_t q = 0; q < k[1]; ++q) {
                                const std::int64_t h = i * st[0] - pd[0] + p, v = j * st[1] - pd[1] + q;
                                if (h < 0 || h >= H || v < 0 || v >= W) continue;
                                acc += x.data[static_cast<std::size_t>(at4(x.shape, b, g * cg + c, h, v))] *
                                       w.data[static_cast<std::size_t>(at4(w.shape, o, c, p, q))];
                            }
                    y.data[static_cast<std::size_t>(at4(y.shape, b, o, i, j))] = acc;
                }
    return y;
}

inline Tensor batch_norm(const Node& n, const std::vector<const Tensor*>& in) {
    const Tensor& x = *in[0];
    const double eps = real_attr(n, "eps", 1e-3);
    const bool fix_gamma = bool_attr(n, "fix_gamma", true);
    Tensor y = x;
    const std::int64_t C = x.shape[1];
    std::int64_t inner = 1;
    for (std::size_t d = 2; d < x.shape.size(); ++d) inner *= x.shape[d];
    for (std::size_t i = 0; i < y.data.size(); ++i) {
        const auto c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / inner) % C);
        const float gamma = fix_gamma ? 1.0f : in[1]->data[c];
        y.data[i] = gamma * (x.data[i] - in[3]->data[c]) / std::sqrt(in[4]->data[c] + static_cast<float>(eps)) + in[2]->data[c];
    }
    return y;
}

inline Tensor activation(const Node& n, const std::vector<const Tensor*>& in) {
    const std::string t = str_attr(n, "act_type", "");
    Tensor y = *in[0];
    for (float& v : y.data) {
        if (t == "relu") v = v > 0 ? v : 0.0f;
        else if (t == "sigmoid") v = 1.0f / (1.0f + std::exp(-v));
        else if (t == "tanh") v = std::tanh(v);
        else if (t == "softsign") v = v / (1.0f + std::fabs(v));
        else throw std::runtime_error("minifw: Activation '" + n.name + "': act_type " + t);
    }
    return y;
}

inline Tensor elemwise_add(const Node&, const std::vector<const Tensor*>& in) {
    Tensor y = *in[0];
    for (std::size_t i = 0; i < y.data.size(); ++i) y.data[i] += in[1]->data[i];
    return y;
}

inline Tensor pooling(const Node& n, const std::vector<const Tensor*>& in) {
    const Tensor& x = *in[0];
    const bool max = str_attr(n, "pool_type", "max") == "max";
    const std::int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    std::vector<std::int64_t> k = ints_attr(n, "kernel", {}), st = ints_attr(n, "stride", {1, 1}), pd = ints_attr(n, "pad", {0, 0});
    if (bool_attr(n, "global_pool", false)) k = {H, W}, st = {1, 1}, pd = {0, 0};
    const std::int64_t OH = (H + 2 * pd[0] - k[0]) / st[0] + 1, OW = (W + 2 * pd[1] - k[1]) / st[1] + 1;
    Tensor y = Tensor::zeros({N, C, OH, OW});
    for (std::int64_t b = 0; b < N; ++b)
        for (std::int64_t c = 0; c < C; ++c)
            for (std::int64_t i = 0; i < OH; ++i)
                for (std::int64_t j = 0; j < OW; ++j) {
                    float acc = max ? -INFINITY : 0.0f;
                    for (std::int64_t p = 0; p < k[0]; ++p)
                        for (std::int64_t q = 0; q < k[1]; ++q) {
                            const std::int64_t h = i * st[0] - pd[0] + p, v = j * st[1] - pd[1] + q;
                            const bool inside = h >= 0 && h < H && v >= 0 && v < W;
                            const float e = inside ? x.data[static_cast<std::size_t>(at4(x.shape, b, c, h, v))] : 0.0f;
                            if (max) {
                                if (inside) acc = std::max(acc, e);
                            } else {
                                acc += e;  // padding counts (MXNet's count_include_pad default)
                            }
                        }
                    y.data[static_cast<std::size_t>(at4(y.shape, b, c, i, j))] =
                        max ? acc : acc / static_cast<float>(k[0] * k[1]);
                }
    return y;
}

inline Tensor flatten(const Node&, const std::vector<const Tensor*>& in) {
    Tensor y = *in[0];
    std::int64_t rest = 1;
    for (std::size_t d = 1; d < y.shape.size(); ++d) rest *= y.shape[d];
    y.shape = {y.shape[0], rest};
    return y;
}

inline Tensor fully_connected(const Node& n, const std::vector<const Tensor*>& in) {
    const Tensor& x = *in[0];
    const Tensor& w = *in[1];  // [hidden, features]
    const bool bias = !bool_attr(n, "no_bias", false);
    const std::int64_t N = x.shape[0], K = x.shape[1], M = w.shape[0];
    Tensor y = Tensor::zeros({N, M});
    for (std::int64_t b = 0; b < N; ++b)
        for (std::int64_t m = 0; m < M; ++m) {
            float acc = bias ? in[2]->data[static_cast<std::size_t>(m)] : 0.0f;
            for (std::int64_t k = 0; k < K; ++k)
                acc += x.data[static_cast<std::size_t>(b * K + k)] * w.data[static_cast<std::size_t>(m * K + k)];
            y.data[static_cast<std::size_t>(b * M + m)] = acc;
        }
    return y;
}

}  // namespace kernels

/// The built-in operators, registered once.
inline bool register_builtin_ops() {
    static const bool done = [] {
        auto one = [](Tensor (*f)(const Node&, const std::vector<const Tensor*>&)) {
            return FCompute([f](const Node& n, const std::vector<const Tensor*>& in) { return std::vector<Tensor>{f(n, in)}; });
        };
        auto& r = op_registry();
        r["Convolution"] = one(kernels::convolution);
        r["BatchNorm"] = one(kernels::batch_norm);
        r["Activation"] = one(kernels::activation);
        r["elemwise_add"] = one(kernels::elemwise_add);
        r["Pooling"] = one(kernels::pooling);
        r["Flatten"] = one(kernels::flatten);
        r["FullyConnected"] = one(kernels::fully_connected);
        return true;
    }();
    return done;
}

/// The nodes the outputs depend on, producers first (an iterative depth-first walk).
inline std::vector<Node*> topo_order(const Graph& g) {
    std::vector<Node*> order;
    std::unordered_map<const Node*, int> state;  // 1 on the stack, 2 done
    std::vector<std::pair<Node*, std::size_t>> stack;
    for (const Entry& e : g.outputs) {
        if (state[e.node] == 2) continue;
        stack.emplace_back(e.node, 0);
        state[e.node] = 1;
        while (!stack.empty()) {
            auto& [n, next] = stack.back();
            if (next < n->inputs.size()) {
                Node* in = n->inputs[next++].node;
                int& s = state[in];
                if (s == 1) throw std::runtime_error("minifw: a cycle through '" + in->name + "'");
                if (s == 0) {
                    s = 1;
                    stack.emplace_back(in, 0);
                }
            } else {
                state[n] = 2;
                order.push_back(n);
                stack.pop_back();
            }
        }
    }
    return order;
}

/// Counts of what one run did.
struct RunInfo {
    std::map<std::string, int> ops_run;  // op name -> nodes run
};

/// Run the graph: every variable either bound (a parameter) or fed by name; returns the outputs.
inline std::vector<Tensor> run(const Graph& g, const std::map<std::string, Tensor>& feeds, RunInfo* info = nullptr) {
    register_builtin_ops();
    std::unordered_map<const Node*, std::vector<Tensor>> values;
    for (Node* n : topo_order(g)) {
        if (n->op == "null") {
            if (n->param) {
                values[n] = {*n->param};
                continue;
            }
            auto it = feeds.find(n->name);
            if (it == feeds.end()) throw std::runtime_error("minifw: no value fed for '" + n->name + "'");
            values[n] = {it->second};
            continue;
        }
        auto op = op_registry().find(n->op);
        if (op == op_registry().end()) throw std::runtime_error("minifw: no operator '" + n->op + "' ('" + n->name + "')");
        std::vector<const Tensor*> in;
        for (const Entry& e : n->inputs) in.push_back(&values.at(e.node).at(static_cast<std::size_t>(e.index)));
        values[n] = op->second(*n, in);
        if (info) ++info->ops_run[n->op];
    }
    std::vector<Tensor> out;
    for (const Entry& e : g.outputs) out.push_back(values.at(e.node).at(static_cast<std::size_t>(e.index)));
    return out;
}

// ---- execution providers (ONNX Runtime's IExecutionProvider, in miniature) ----

/// A set of nodes a provider claims, to become one fused node: the nodes, the values they read
/// from outside (in order) and the values they produce for the rest of the graph (in order).
struct IndexedSubGraph {
    std::vector<Node*> nodes;
    std::vector<Entry> inputs;
    std::vector<Entry> outputs;
};

/// What a provider compiles for one claimed set (ONNX Runtime's NodeComputeInfo).
struct ComputeInfo {
    std::function<std::shared_ptr<void>()> create_state;  // once, when the session is made
    std::function<std::vector<Tensor>(void* state, const std::vector<const Tensor*>& inputs)> compute;
    std::function<void(void* state)> release_state;  // when the session ends
};

class ExecutionProvider {
public:
    virtual ~ExecutionProvider() = default;
    /// The sets of nodes of g this provider runs (g as it is; nothing changed).
    virtual std::vector<IndexedSubGraph> GetCapability(const Graph& g) = 0;
    /// One ComputeInfo per set GetCapability returned, called before the graph is changed.
    virtual std::vector<ComputeInfo> Compile(const Graph& g, const std::vector<IndexedSubGraph>& sets) = 0;
};

/// A graph made ready to run: each set a provider claims becomes one node ("_ep_fused") whose
/// compute is the provider's; everything else runs on the framework's kernels.
class Session {
public:
    explicit Session(Graph g, std::shared_ptr<ExecutionProvider> ep = nullptr) : g_(std::move(g)), ep_(std::move(ep)) {
        if (!ep_) return;
        std::vector<IndexedSubGraph> sets = ep_->GetCapability(g_);
        std::vector<ComputeInfo> infos = ep_->Compile(g_, sets);
        if (infos.size() != sets.size()) throw std::runtime_error("minifw::Session: Compile returned too few functions");
        for (std::size_t i = 0; i < sets.size(); ++i) fuse(sets, i, std::move(infos[i]));
    }
    ~Session() {
        for (auto& f : fused_)
            if (f->info.release_state) f->info.release_state(f->state.get());
    }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    std::vector<Tensor> run(const std::map<std::string, Tensor>& feeds, RunInfo* info = nullptr) const {
        return minifw::run(g_, feeds, info);
    }
    const Graph& graph() const { return g_; }

private:
    struct fused_op {
        ComputeInfo info;
        std::shared_ptr<void> state;
    };
    // Set k becomes one node; the later sets' inputs that it produced are read from that node.
    void fuse(std::vector<IndexedSubGraph>& sets, std::size_t k, ComputeInfo info) {
        const IndexedSubGraph set = sets[k];
        static const bool registered = [] {
            op_registry()["_ep_fused"] = [](const Node& n, const std::vector<const Tensor*>& in) {
                const auto& f = *std::static_pointer_cast<const fused_op>(n.state);
                return f.info.compute(f.state.get(), in);
            };
            return true;
        }();
        (void)registered;
        auto f = std::make_shared<fused_op>();
        f->state = info.create_state ? info.create_state() : nullptr;
        f->info = std::move(info);
        fused_.push_back(f);
        Node* n = g_.op("_ep_fused", "ep_fused_" + std::to_string(k), set.inputs);
        n->num_outputs = static_cast<int>(set.outputs.size());
        n->state = f;
        auto inside = [&](const Node* m) { return std::find(set.nodes.begin(), set.nodes.end(), m) != set.nodes.end(); };
        auto redirect = [&](Entry& e) {
            for (std::size_t o = 0; o < set.outputs.size(); ++o)
                if (e.node == set.outputs[o].node && e.index == set.outputs[o].index) e = Entry{n, static_cast<int>(o)};
        };
        for (auto& m : g_.nodes)
            if (!inside(m.get()) && m.get() != n)
                for (Entry& e : m->inputs) redirect(e);
        for (Entry& e : g_.outputs) redirect(e);
        for (std::size_t j = k + 1; j < sets.size(); ++j)
            for (Entry& e : sets[j].inputs) redirect(e);
        g_.nodes.erase(std::remove_if(g_.nodes.begin(), g_.nodes.end(), [&](const std::unique_ptr<Node>& m) { return inside(m.get()); }),
                       g_.nodes.end());
    }

    Graph g_;
    std::shared_ptr<ExecutionProvider> ep_;
    std::vector<std::shared_ptr<fused_op>> fused_;
};

}  // namespace minifw
