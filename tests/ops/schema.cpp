// The op descriptions: one per vocabulary op, attributes read with their defaults, and every
// attribute value no kernel implements refused at once, naming the node.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "sgmatch/graph/graph.hpp"
#include "sgmatch/ops/shape_rule_table.hpp"
#include "sgmatch/ops/table.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

using namespace sgmatch;

namespace {

template <class... Tags>
void every_tag_described() {
    auto one = [](auto tag) {
        using T = decltype(tag);
        CAPTURE(T::names[0]);
        const ops::op_schema* s = ops::find_schema(T::names[0]);
        REQUIRE(s != nullptr);
        // The description speaks of the tag's op: the same names, each alias found.
        REQUIRE(s->name_count == std::size(T::names));
        for (std::size_t i = 0; i < s->name_count; ++i) {
            CHECK(s->names[i] == T::names[i]);
            CHECK(ops::find_schema(T::names[i]) == s);
        }
        CHECK((ops::shape_rule_of(*s) != nullptr));
    };
    (one(Tags{}), ...);
}

// A graph of one node of `op` on inputs of the given count, with the given attributes.
struct one_node {
    graph g;
    node_id n;
    one_node(const char* op, std::size_t inputs, graph::attr_list attrs) {
        std::vector<input_ref> in;
        for (std::size_t i = 0; i < inputs; ++i) in.push_back(g.add_input("x" + std::to_string(i)));
        n = g.add_op(op, "node7", in, attrs);
        g.mark_output(n);
    }
    ops::op_attrs attrs() const { return ops::op_attrs(*ops::find_schema(g.op_name(n)), ops::node_of<graph>(g, n)); }
};

}  // namespace

TEST_CASE("every op of the vocabulary has one description, found by each of its names") {
    using namespace ops;
    every_tag_described<Conv, ConvTranspose, MatMul, Gemm, BatchNorm, LayerNorm, LRN, Relu, LeakyRelu, Clip, Sigmoid, Tanh,
                        Elu, Gelu, Swish, HardSwish, HardSigmoid, Mish, Softplus, Exp, Log, Sqrt, Square, Abs, Round, Erf,
                        Pow, Add, Sub, Mul, Div, Max, Min, MaxPool, AveragePool, GlobalAveragePool, Softmax, Concat, Reshape,
                        Flatten, Transpose, Pad, Identity, Constant>();
    every_tag_described<Neg, Reciprocal, Softsign, Selu, Celu, ThresholdedRelu, PRelu, Sum, Mean, ReduceMean, ReduceSum,
                        ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
                        GlobalMaxPool, LogSoftmax, Unsqueeze, Squeeze, Slice, Gather, Expand, Dropout, Cast>();
    every_tag_described<Split, Shape, Size, ConstantOfShape, Where, Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And,
                        Or, Xor, Not, Resize>();
    every_tag_described<Mod, Tile, Trilu, Range, CumSum, ArgMax, ArgMin, Ceil, Floor, Sign, Sin, Cos, Tan, Asin, Acos, Atan,
                        Sinh, Cosh, Asinh, Acosh, Atanh, IsNaN, IsInf, GatherElements, ScatterElements, DepthToSpace,
                        SpaceToDepth, CastLike, Shrink, RNN, GRU, LSTM>();
    // ... and the table holds no description twice, each found by its own name.
    std::set<const ops::op_schema*> distinct(ops::all_schemas().begin(), ops::all_schemas().end());
    CHECK(distinct.size() == ops::all_schemas().size());
    for (const ops::op_schema* s : ops::all_schemas()) CHECK(ops::find_schema(s->name()) == s);
    CHECK(ops::find_schema("NoSuchOp") == nullptr);
    // Attribute names for adapters that cannot list attributes: each once, from the descriptions.
    const auto& names = ops::all_attribute_names();
    CHECK(std::set<std::string_view>(names.begin(), names.end()).size() == names.size());
    for (const char* k : {"ceil_mode", "storage_order", "output_shape", "allowzero", "transA", "epsilon", "value_ints"})
        CHECK(std::find(names.begin(), names.end(), std::string_view(k)) != names.end());
}

TEST_CASE("attributes read their defaults from the description, per spatial axis where they are lists") {
    const one_node conv("Conv", 2, {{"group", 2}, {"pads", attribute::ints{1, 1, 0, 0}}});
    const ops::op_attrs a = conv.attrs();
    CHECK(a.i("group") == 2);
    CHECK(a.has("pads"));
    CHECK_FALSE(a.has("strides"));
    CHECK(a.ints("strides", 2) == ops::dims{1, 1});
    CHECK(a.ints("strides", 3) == ops::dims{1, 1, 1});
    CHECK(a.ints("pads", 2) == ops::dims{1, 1, 0, 0});  // given: the axis count does not matter
    CHECK(a.s("auto_pad") == "NOTSET");
    CHECK(a.ints("kernel_shape").empty());  // no default: taken from the weights

    const one_node bn("BatchNormalization", 5, {});
    CHECK(bn.attrs().f("epsilon") == doctest::Approx(1e-5));
    const one_node leaky("LeakyRelu", 1, {});
    CHECK(leaky.attrs().f("alpha") == doctest::Approx(0.01));
    const one_node leaky2("leaky_relu", 1, {{"alpha", 0.2}});  // an alias, an explicit value
    CHECK(leaky2.attrs().f("alpha") == doctest::Approx(0.2));
    const one_node gemm("Gemm", 3, {{"transB", 1}, {"alpha", 2}});  // an integer where a real is read
    CHECK(gemm.attrs().i("transB") == 1);
    CHECK(gemm.attrs().i("transA") == 0);
    CHECK(gemm.attrs().f("alpha") == 2.0);
    CHECK(gemm.attrs().f("beta") == 1.0);
    const one_node clip("Clip", 1, {});
    CHECK(clip.attrs().f("min") < -1e38);
    CHECK(clip.attrs().f("max") > 1e38);
    // A single integer where a list is read is a list of one.
    const one_node pool("MaxPool", 1, {{"kernel_shape", 3}});
    CHECK(pool.attrs().ints("kernel_shape") == ops::dims{3});
}

TEST_CASE("every attribute the kernels do not implement is refused, all at once, naming the node") {
    auto refused = [](const one_node& n) -> std::string {
        try {
            (void)n.attrs();
        } catch (const ops::op_error& e) {
            return e.what();
        }
        return "";
    };
    // MaxPool: a dilation of 0, an Indices layout that is neither row- nor column-major, no
    // kernel_shape, an unknown attribute, a wrong type: five problems in one message.
    const one_node pool("MaxPool", 1, {{"dilations", attribute::ints{0, 2}}, {"storage_order", 2}, {"padding", 2}, {"strides", "2"}});
    const std::string m = refused(pool);
    CHECK(m.find("node 'node7' (MaxPool)") != std::string::npos);
    CHECK(m.find("attribute dilations = [0, 2] is not implemented (implemented: >= 1)") != std::string::npos);
    CHECK(m.find("attribute storage_order = 2 is not implemented (implemented: 0 to 1)") != std::string::npos);
    CHECK(m.find("attribute padding is not one of MaxPool's attributes") != std::string::npos);
    CHECK(m.find("attribute strides is not a list of integers") != std::string::npos);
    CHECK(m.find("attribute kernel_shape is required") != std::string::npos);

    CHECK(refused(one_node("Conv", 2, {{"auto_pad", "SAME_UPPER"}})).find(
              "attribute auto_pad = 'SAME_UPPER' is not implemented (implemented: NOTSET): give explicit pads") != std::string::npos);
    CHECK(refused(one_node("Conv", 2, {{"strides", attribute::ints{1, 0}}})).find("attribute strides = [1, 0] is not implemented (implemented: >= 1)") !=
          std::string::npos);
    CHECK(refused(one_node("ConvTranspose", 2, {{"output_shape", attribute::ints{8, 8}}})).find(
              "attribute output_shape is not implemented: give pads and output_padding (the ONNX front end writes them out)") != std::string::npos);
    CHECK(refused(one_node("Gelu", 1, {{"approximate", "fast"}})).find("approximate = 'fast'") != std::string::npos);
    CHECK(refused(one_node("Reshape", 2, {{"allowzero", 2}})).find("allowzero = 2 is not implemented") != std::string::npos);
    CHECK(refused(one_node("BatchNormalization", 5, {{"training_mode", 2}})).find("training_mode = 2") != std::string::npos);
    CHECK(refused(one_node("Add", 2, {{"broadcast", 1}, {"axis", 1}})).find("attribute axis is not implemented") != std::string::npos);
    // A required attribute given with a value the kernels do not implement is that, not "required".
    const std::string cast = refused(one_node("Cast", 1, {{"to", 17}}));
    CHECK(cast.find("attribute to = 17 is not implemented (implemented: 1 to 16)") != std::string::npos);
    CHECK(cast.find("is required") == std::string::npos);
    // Input counts.
    CHECK(refused(one_node("Conv", 1, {})).find("1 inputs, expected 2 to 3") != std::string::npos);
    CHECK(refused(one_node("Relu", 2, {})).find("2 inputs, expected 1") != std::string::npos);
    CHECK(refused(one_node("Concat", 0, {{"axis", 0}})).find("0 inputs, expected at least 1") != std::string::npos);
    // What is implemented passes.
    CHECK(refused(one_node("AveragePool", 1, {{"kernel_shape", attribute::ints{2, 2}}, {"count_include_pad", 1}})).empty());
    CHECK(refused(one_node("Pad", 1, {{"mode", "reflect"}, {"pads", attribute::ints{0, 1, 0, 1}}})).empty());
}

TEST_CASE("an adapter that cannot list attributes: the described ones are read and checked by key") {
    // ops::node_source over a graph type with attr() only: nothing unknown can be seen, the
    // known ones are checked as usual.
    struct keyed final : ops::node_source {
        std::string_view name() const override { return "p"; }
        std::string_view op_name() const override { return "MaxPool"; }
        std::optional<attribute> attr(std::string_view k) const override {
            if (k == "kernel_shape") return attribute(attribute::ints{2, 2});
            if (k == "storage_order") return attribute(2);
            if (k == "unknown_thing") return attribute(7);
            return std::nullopt;
        }
        bool list_attrs(void (*)(void*, std::string_view, const attribute&), void*) const override { return false; }
        std::size_t input_count() const override { return 1; }
        std::optional<const_tensor_view> constant_input(std::size_t) const override { return std::nullopt; }
        std::optional<tensor_type> input_type(std::size_t) const override { return std::nullopt; }
    };
    CHECK_THROWS_WITH_AS(ops::op_attrs(ops::schemas::max_pool, keyed{}),
                         "sgmatch: node 'p' (MaxPool): attribute storage_order = 2 is not implemented (implemented: 0 to 1)",
                         ops::op_error);
}
