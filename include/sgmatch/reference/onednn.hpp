// sgmatch/reference/onednn.hpp - xtensor containers in and out of sgmatch's oneDNN kernels.
//
// The oneDNN part speaks in layout-carrying tensors (sgmatch/onednn/tensor.hpp) and views of
// caller memory; this adapter, kept with the xtensor part, wraps an xt::xarray as a plain view
// (no copy) and reads any tensor back into one (a reorder when its layout is not plain).
#pragma once

#include <cstddef>
#include <vector>

#include "sgmatch/reference/xtensor.hpp"

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/tensor.hpp"
#include "sgmatch/reference/kernels.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace reference {

/// A plain-layout view of a (row-major) array; the array must outlive the view. A scalar
/// (rank 0) is a one-element tensor of rank 1, as oneDNN has no rank 0.
inline onednn::tensor to_tensor(const array& a) {
    onednn::dims d(a.shape().begin(), a.shape().end());
    if (d.empty()) d.push_back(1);
    return onednn::tensor::view(a.data(), d);
}

/// The values of t, plain row-major, in a new array of its shape.
inline array to_array(const onednn::tensor& t) {
    const onednn::dims d = t.shape();
    array a = xt::zeros<float>(std::vector<std::size_t>(d.begin(), d.end()));
    t.copy_to(a.data());
    return a;
}

}  // namespace reference
SGMATCH_END_NAMESPACE
