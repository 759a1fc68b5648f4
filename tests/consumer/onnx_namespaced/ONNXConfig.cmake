# An ONNX package shaped as ONNX >= 1.16 exports it: only the namespaced targets ONNX::onnx and
# ONNX::onnx_proto (carrying ONNX's definitions), no plain `onnx` / `onnx_proto`. It points at
# the system's libonnx, so that tests/consumer/run.sh can build sgmatch and a consumer against
# such a package without fetching ONNX. Found through -DONNX_DIR=<this directory>; with
# -DONNX_FAKE_LIBDIR=<dir> the libraries are taken from there only.
if(ONNX_FAKE_LIBDIR)
  set(_fake_where PATHS "${ONNX_FAKE_LIBDIR}" NO_DEFAULT_PATH)
endif()
find_library(_fake_onnx_lib NAMES onnx ${_fake_where} REQUIRED)
find_library(_fake_onnx_proto_lib NAMES onnx_proto ${_fake_where} REQUIRED)
if(NOT TARGET ONNX::onnx_proto)
  add_library(ONNX::onnx_proto SHARED IMPORTED)
  set_target_properties(ONNX::onnx_proto PROPERTIES
    IMPORTED_LOCATION "${_fake_onnx_proto_lib}"
    INTERFACE_COMPILE_DEFINITIONS "ONNX_NAMESPACE=onnx;ONNX_ML=1"
    INTERFACE_LINK_LIBRARIES "protobuf::libprotobuf")
  add_library(ONNX::onnx SHARED IMPORTED)
  set_target_properties(ONNX::onnx PROPERTIES
    IMPORTED_LOCATION "${_fake_onnx_lib}"
    INTERFACE_COMPILE_DEFINITIONS "ONNX_NAMESPACE=onnx;ONNX_ML=1"
    INTERFACE_LINK_LIBRARIES "ONNX::onnx_proto")
endif()
set(ONNX_FOUND TRUE)
