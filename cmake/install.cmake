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
# A dependency without a .pc file of its own (oneDNN, libonnx) is linked by name, with -L where
# the library found is not in a directory the linker searches anyway; a static one brings what it
# needs itself (a static oneDNN: OpenMP). Protobuf and xtensor have .pc files: Requires.
function(sgmatch_pc_libs out)
  set(libs)
  foreach(target IN LISTS ARGN)
    set(loc)
    foreach(prop IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_RELWITHDEBINFO IMPORTED_LOCATION IMPORTED_LOCATION_NOCONFIG
                 IMPORTED_LOCATION_DEBUG)
      if(NOT loc AND TARGET ${target})
        get_target_property(loc ${target} ${prop})
      endif()
    endforeach()
    if(NOT loc)
      continue()
    endif()
    get_filename_component(dir "${loc}" DIRECTORY)
    get_filename_component(name "${loc}" NAME_WE)
    string(REGEX REPLACE "^lib" "" name "${name}")
    if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES AND NOT "-L${dir}" IN_LIST libs)
      list(APPEND libs "-L${dir}")
    endif()
    list(APPEND libs "-l${name}")
    if(loc MATCHES "\\.a$" AND name STREQUAL "dnnl")
      list(APPEND libs "-fopenmp")
    endif()
  endforeach()
  list(JOIN libs " " libs)
  set(${out} "${libs}" PARENT_SCOPE)
endfunction()
if(TARGET DNNL::dnnl)
  sgmatch_pc_libs(SGMATCH_PC_DNNL_LIBS DNNL::dnnl)
endif()
if(TARGET ONNX::onnx)
  sgmatch_pc_libs(SGMATCH_PC_ONNX_LIBS ONNX::onnx ONNX::onnx_proto)
elseif(TARGET onnx)
  sgmatch_pc_libs(SGMATCH_PC_ONNX_LIBS onnx onnx_proto)
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

# Separate compilation: sgmatch_add_compiled and the sources it builds (with onednn and reference).
if(onednn IN_LIST SGMATCH_COMPONENTS AND reference IN_LIST SGMATCH_COMPONENTS)
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/sgmatch_compiled.cmake DESTINATION ${SGMATCH_CMAKE_DIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/cmake/compiled DESTINATION ${SGMATCH_CMAKE_DIR})
endif()

# The torch part's plugin function and the one source file it builds.
if(torch IN_LIST SGMATCH_COMPONENTS)
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/sgmatch_torch_plugin.cmake ${PROJECT_SOURCE_DIR}/cmake/sgmatch_torch_plugin.cpp
    DESTINATION ${SGMATCH_CMAKE_DIR})
endif()
