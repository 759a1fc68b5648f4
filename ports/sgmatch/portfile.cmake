# An overlay port building from this source tree:
#   vcpkg install sgmatch --overlay-ports=<sgmatch>/ports
set(VCPKG_BUILD_TYPE release)  # header-only
get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)

vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    onednn    SGMATCH_WITH_ONEDNN
    reference SGMATCH_WITH_REFERENCE
    onnx      SGMATCH_WITH_ONNX)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    -DSGMATCH_BUILD_TESTS=OFF
    -DSGMATCH_BUILD_EXAMPLES=OFF
    -DSGMATCH_BUILD_BENCHMARKS=OFF
    -DSGMATCH_INSTALL=ON
    -DSGMATCH_CHECK_DEPENDENCIES=ON  # the build fails if the headers do not fit the dependencies vcpkg chose
    ${FEATURE_OPTIONS})
vcpkg_cmake_install()  # builds the dependency checks first (cmake/check/)
vcpkg_cmake_config_fixup(PACKAGE_NAME sgmatch CONFIG_PATH share/cmake/sgmatch)
vcpkg_fixup_pkgconfig()
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
