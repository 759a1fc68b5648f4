// expect: sgmatch::onednn::lowering<Tag> with role eltwise must define static std::vector<post_op> post_ops
// expect-also: Sin
// A lowering that claims the eltwise role and gives no post-ops: named once, where the backend
// reads the lowerings.
#include "sgmatch/onednn/lowering/roles.hpp"

namespace sgmatch::onednn {
template <>
struct lowering<ops::Sin> {
    static constexpr lowering_role role = lowering_role::eltwise;
};
}  // namespace sgmatch::onednn

#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onednn/backend.hpp"

int main() {
    const sgmatch::graph g;
    (void)sgmatch::onednn::lower_match<sgmatch::graph, std::decay_t<decltype(sgmatch::onednn::conv_post_ops)>>(g, nullptr, 0, false);
}
