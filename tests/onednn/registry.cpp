// Every op of the standard vocabulary, walked through its facets in every layer (description,
// shape rule, kernel binding, lowering, region, layout, generator): the facets must agree.
#include <doctest/doctest.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sgmatch/exec/kernels.hpp"
#include "sgmatch/exec/kernels/typed.hpp"
#include "sgmatch/exec/kernels/typed_onednn.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/onednn/layout_plan.hpp"
#include "sgmatch/match/match.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/onednn/lowering/lists.hpp"
#include "sgmatch/ops/shape_rule_table.hpp"
#include "sgmatch/ops/control.hpp"
#include "sgmatch/ops/table.hpp"
#include "sgmatch/pattern/vocabulary.hpp"
#include "sgmatch/testing/generators.hpp"

namespace {

using namespace sgmatch;
using onednn::lowering_role;

// What one tag's entry has in each layer: its facets, read from the templates each layer
// specializes (ops/schema.hpp), never through the derived lists they are checked against.
struct op_facets {
    std::string name;  // its first name
    const ops::op_schema* schema = nullptr;
    ops::shape_rule shape = nullptr;
    const exec::kernel_binding* binding = nullptr;  // null where f32_kernels<Tag> is not specialized
    bool typed = false;
    bool onednn_typed = false;
    lowering_role role = lowering_role::none;
    bool keeps_layout = false;
    bool in_regions = false;
    bool generator = false;
    std::size_t conformance_cases = 0;
    bool own_names = true;  // the description names the tag's names
};

bool region_takes_op(std::string_view n) {
    const auto& r = exec::region_op_names();
    return std::find(r.begin(), r.end(), n) != r.end();
}

template <class... T>
std::vector<op_facets> walk_vocabulary(ops::tag_list<T...>) {
    std::vector<op_facets> out;
    auto one = [&](auto tag) {
        using X = decltype(tag);
        op_facets f;
        f.name = std::string(X::names[0]);
        if constexpr (ops::described_v<X>) f.schema = ops::description<X>;
        if constexpr (ops::has_facet_v<decltype(ops::shape_rule_for<X>)>) f.shape = ops::shape_rule_for<X>;
        f.own_names = f.schema == nullptr || f.schema->names == X::names;
        if constexpr (ops::has_facet_v<decltype(exec::kernels::f32_kernels<X>)>) f.binding = &exec::kernels::f32_kernels<X>;
        f.typed = ops::has_facet_v<decltype(exec::kernels::typed_kernels<X>)>;
        f.onednn_typed = ops::has_facet_v<decltype(exec::kernels::onednn_typed_kernels<X>)>;
        f.role = onednn::lowering<X>::role;
        f.keeps_layout = onednn::keeps_layout_v<X>;
        f.in_regions = region_takes_op(X::names[0]);
        if constexpr (!std::is_base_of_v<ops::no_facet, testing::generator<X>>) {
            f.generator = true;
            f.conformance_cases = std::size(testing::generator<X>::conformance);
        }
        out.push_back(f);
    };
    (one(T{}), ...);
    return out;
}

template <class... T>
std::vector<std::string_view> vocabulary_names(ops::tag_list<T...>) {
    std::vector<std::string_view> v;
    auto add = [&](auto tag) { v.insert(v.end(), std::begin(decltype(tag)::names), std::end(decltype(tag)::names)); };
    (add(T{}), ...);
    return v;
}

// Post-ops with no generator: ops that the ONNX conformance data of libonnx 1.12 has no case for
// (Gelu and Mish are newer than its opset 17; Swish and Square are not ONNX ops), so no
// reference kernel of theirs is trusted to check a fusion against. Their oneDNN kernels are
// checked against their reference kernels in tests/onednn/op_kernels.cpp.
const std::set<std::string> post_ops_without_generator = {"Gelu", "Swish", "Mish", "Square"};

}  // namespace

TEST_CASE("every post-op of the vocabulary has a description, a reference and a oneDNN kernel, a region that takes it, and a generator") {
    int post_ops = 0;
    for (const op_facets& f : walk_vocabulary(ops::vocabulary{})) {
        if (f.role != lowering_role::eltwise && f.role != lowering_role::binary) continue;
        ++post_ops;
        INFO("op ", f.name);
        REQUIRE(f.schema != nullptr);
        REQUIRE(f.binding != nullptr);
        CHECK((f.binding->reference != nullptr));
        CHECK((f.binding->onednn != nullptr));
        CHECK(f.in_regions);
        CHECK(f.generator != (post_ops_without_generator.count(f.name) == 1));
    }
    CHECK(post_ops > 0);
}

TEST_CASE("the derived post-op patterns match exactly the tags with an eltwise or binary lowering") {
    for (const op_facets& f : walk_vocabulary(ops::vocabulary{})) {
        INFO("op ", f.name);
        // The op after an Identity, on one input and on two: a post-op follows its main op.
        auto after_identity = [&](std::size_t inputs, const auto& post_op) {
            graph g;
            const node_id x = g.add_op("Identity", "x", {g.add_input("xi")});
            std::vector<input_ref> in{x};
            if (inputs == 2) in.push_back(g.add_input("yi"));
            g.mark_output(g.add_op(f.name, "n", in));
            return static_cast<bool>(match(g, x, op<ops::Identity>() >> post_op));
        };
        const bool unary = after_identity(1, onednn::unary_post_op);
        const bool binary = after_identity(2, onednn::binary_post_op);
        CHECK(unary == (f.role == lowering_role::eltwise));
        CHECK(binary == (f.role == lowering_role::binary));
    }
}

TEST_CASE("every op with a oneDNN kernel has a reference kernel to check it against, and regions take exactly those and Erf") {
    for (const op_facets& f : walk_vocabulary(ops::vocabulary{})) {
        INFO("op ", f.name);
        const bool onednn_kernel = f.binding != nullptr && f.binding->onednn != nullptr;
        if (onednn_kernel) CHECK((f.binding->reference != nullptr));
        CHECK(f.in_regions == (onednn_kernel || f.name == "Erf"));
    }
}

TEST_CASE("an op that keeps a conv's blocked layout is element-wise, a BatchNorm, an Identity or a Sum") {
    int keeping = 0;
    for (const op_facets& f : walk_vocabulary(ops::vocabulary{})) {
        if (!f.keeps_layout) continue;
        ++keeping;
        INFO("op ", f.name);
        const bool elementwise = f.role == lowering_role::eltwise || f.role == lowering_role::binary ||
                                 f.role == lowering_role::batch_norm || f.role == lowering_role::identity || f.name == "Sum";
        CHECK(elementwise);
        CHECK(onednn::detail::keeps_layout(f.name));
        if (f.schema != nullptr) CHECK(onednn::detail::keeps_layout(f.schema->name()));
    }
    CHECK(keeping > 0);
    CHECK_FALSE(onednn::detail::keeps_layout("Concat"));
    CHECK_FALSE(onednn::detail::keeps_layout("Gelu"));
}

TEST_CASE("every facet hangs on a described op, and the derived lists hold exactly the entries' facets") {
    std::size_t described = 0;
    for (const op_facets& f : walk_vocabulary(ops::vocabulary{})) {
        INFO("op ", f.name);
        if (f.schema == nullptr) {
            // A facet on a tag without a description would be skipped by every derived list.
            CHECK((f.shape == nullptr));
            CHECK((f.binding == nullptr));
            CHECK_FALSE(f.typed);
            CHECK_FALSE(f.onednn_typed);
            CHECK_FALSE(f.generator);
            continue;
        }
        ++described;
        CHECK(f.own_names);
        CHECK(ops::find_schema(f.name) == f.schema);
        CHECK((exec::find_kernels(f.schema) == f.binding));
        CHECK((exec::find_typed_kernel(f.schema) != nullptr) == f.typed);
        CHECK((exec::typed::find_onednn_typed_kernel(f.schema) != nullptr) == f.onednn_typed);
        CHECK(testing::can_draw(f.name) == f.generator);
    }
    CHECK(ops::all_schemas().size() == described);
}

TEST_CASE("every described op has a shape rule (or says its shapes are known when it runs), a kernel, and no name belongs to two tags") {
    std::set<std::string_view> names;
    for (std::string_view n : vocabulary_names(ops::vocabulary{})) {
        INFO("name ", n);
        CHECK(names.insert(n).second);
    }
    for (const op_facets& f : walk_vocabulary(ops::vocabulary{})) {
        if (f.schema == nullptr) continue;
        INFO("op ", f.name);
        REQUIRE((f.shape != nullptr));
        const bool when_run = f.shape == ops::rules::known_when_run;
        CHECK((ops::shape_rule_of(*f.schema) == nullptr) == when_run);
        // An op whose shapes are known only when it runs runs on typed kernels (or its body), whose
        // values the executor checks against the declared types after the run.
        if (when_run) CHECK((f.typed || ops::has_body(*f.schema)));
        const bool runs = f.binding != nullptr || f.typed || ops::has_body(*f.schema);
        CHECK(runs);
    }
}

TEST_CASE("every oneDNN kernel has a kernel of the layer below to check it against, and every generator a reference kernel and conformance cases") {
    for (const op_facets& f : walk_vocabulary(ops::vocabulary{})) {
        INFO("op ", f.name);
        if (f.onednn_typed) CHECK(f.typed);
        if (f.binding != nullptr && f.binding->onednn != nullptr) CHECK((f.binding->reference != nullptr));
        if (f.generator) {
            REQUIRE(f.binding != nullptr);
            CHECK((f.binding->reference != nullptr));
            CHECK(f.conformance_cases > 0);
        }
    }
}
