// sgmatch/reference/xtensor.hpp - the xtensor headers the reference kernels use, in either
// layout: xtensor up to 0.25 (xtensor/xarray.hpp, ...; C++14 and later) and 0.26 on
// (xtensor/containers/xarray.hpp, ...; C++20, with xtl >= 0.8). The one place sgmatch includes
// xtensor from.
#pragma once

#if __has_include(<xtensor/containers/xarray.hpp>)
#include <xtensor/containers/xarray.hpp>
#include <xtensor/core/xmath.hpp>
#include <xtensor/misc/xmanipulation.hpp>
#include <xtensor/views/xbroadcast.hpp>
#else
#include <xtensor/xarray.hpp>
#include <xtensor/xbroadcast.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>
#endif
