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
    -DSGMATCH_WITH_TORCH=OFF  # the TorchScript host needs a Torch vcpkg does not provide (never one found elsewhere)
    ${FEATURE_OPTIONS})
vcpkg_cmake_install()  # builds the dependency checks first (cmake/check/)
vcpkg_cmake_config_fixup(PACKAGE_NAME sgmatch CONFIG_PATH share/cmake/sgmatch)
vcpkg_fixup_pkgconfig()
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/share/doc")  # the LICENSE: vcpkg's copyright file has it

# The usage text names only the components and .pc files this build installed.
set(components "")
set(pc_files "sgmatch")
set(targets "sgmatch::core")
foreach(part IN ITEMS onednn reference onnx)
  if(part IN_LIST FEATURES)
    list(APPEND components ${part})
    list(APPEND pc_files sgmatch-${part})
    string(APPEND targets ", sgmatch::${part}")
  endif()
endforeach()
list(JOIN components " " components_text)
if(NOT components)
  set(components_text "core")
endif()
list(JOIN pc_files ", " pc_text)
configure_file("${CMAKE_CURRENT_LIST_DIR}/usage.in" "${CURRENT_PACKAGES_DIR}/share/${PORT}/usage" @ONLY)
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
