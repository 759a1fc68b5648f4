# Install rules: headers, one export set per component, a config file that looks up only the
# dependencies of the components asked for, a version file, and pkg-config files.
include(CMakePackageConfigHelpers)

set(SGMATCH_CMAKE_DIR ${CMAKE_INSTALL_DATADIR}/cmake/sgmatch CACHE STRING
    "Where sgmatch's CMake package files go, relative to the prefix")
set(SGMATCH_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig CACHE STRING
    "Where sgmatch's pkg-config files go, relative to the prefix")

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/sgmatch)

foreach(c IN LISTS SGMATCH_COMPONENTS)
  install(TARGETS sgmatch_${c} EXPORT sgmatch-${c}-targets)
  install(EXPORT sgmatch-${c}-targets NAMESPACE sgmatch:: DESTINATION ${SGMATCH_CMAKE_DIR})
endforeach()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/sgmatchConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sgmatchConfig.cmake INSTALL_DESTINATION ${SGMATCH_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sgmatchConfigVersion.cmake
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/sgmatchConfig.cmake ${PROJECT_BINARY_DIR}/sgmatchConfigVersion.cmake
  DESTINATION ${SGMATCH_CMAKE_DIR})

# pkg-config: sgmatch.pc (core), sgmatch-onednn.pc (Debian ships no dnnl.pc, so it names -ldnnl
# itself) and sgmatch-reference.pc. Paths are relative to the .pc file's own directory
# (${pcfiledir}), so a prefix moved after installing (a Conan cache, a copied tree) still works.
file(RELATIVE_PATH SGMATCH_PC_TO_PREFIX "/prefix/${SGMATCH_PKGCONFIG_DIR}" "/prefix")
string(REGEX REPLACE "/$" "" SGMATCH_PC_TO_PREFIX "${SGMATCH_PC_TO_PREFIX}")
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(SGMATCH_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(SGMATCH_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
foreach(c IN LISTS SGMATCH_COMPONENTS)
  if(c STREQUAL "torch")  # Torch has no pkg-config file to name: CMake only
    continue()
  endif()
  set(pc sgmatch-${c})
  if(c STREQUAL "core")
    set(pc sgmatch)
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${SGMATCH_PKGCONFIG_DIR})
endforeach()

# The torch part's plugin function and the one source file it builds.
if(torch IN_LIST SGMATCH_COMPONENTS)
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/sgmatch_torch_plugin.cmake ${PROJECT_SOURCE_DIR}/cmake/sgmatch_torch_plugin.cpp
    DESTINATION ${SGMATCH_CMAKE_DIR})
endif()
