# The settled dependency set (see ../shared/TOOLCHAIN.md for the traps).
# The fuzz build needs only protobuf and ONNX.
find_package(Protobuf REQUIRED)
find_package(ONNX CONFIG REQUIRED)  # after Protobuf: its targets use protobuf's
if(TESSEL_FUZZ)
  return()
endif()

if(TESSEL_WITH_LLVM)
  find_package(LLVM 19.1 REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/llvm)
  message(STATUS "LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")
endif()

find_package(nlohmann_json 3.11 REQUIRED)
if(TESSEL_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

find_package(xgboost CONFIG QUIET)
if(TARGET xgboost::xgboost)
  set(TESSEL_XGBOOST xgboost::xgboost)
else()
  find_path(XGBOOST_INCLUDE_DIR xgboost/c_api.h REQUIRED)
  find_library(XGBOOST_LIBRARY NAMES xgboost libxgboost.so.1.6.0 REQUIRED)
  add_library(tessel_xgboost INTERFACE)
  target_include_directories(tessel_xgboost INTERFACE ${XGBOOST_INCLUDE_DIR})
  target_link_libraries(tessel_xgboost INTERFACE ${XGBOOST_LIBRARY})
  set(TESSEL_XGBOOST tessel_xgboost)
endif()

# No CUDA toolkit at build time: NVRTC and the driver (libcuda) are opened
# with dlopen at run time (src/codegen/cuda/nvrtc_library.h), so a CPU-only
# machine builds everything and a GPU machine finds them where they are.
