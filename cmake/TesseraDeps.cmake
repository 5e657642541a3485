# Locates the third-party tools and libraries the build needs, failing with a plain message that
# says how to install what is missing (`make deps`).

find_program(RE2C_EXECUTABLE re2c)
if(NOT RE2C_EXECUTABLE)
  message(FATAL_ERROR "re2c not found: run `make deps` (Debian package re2c)")
endif()

# LLVM's version file wants major.minor to match exactly, so look by path and check the major.
find_package(LLVM CONFIG PATHS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
if(NOT LLVM_FOUND OR NOT LLVM_VERSION_MAJOR EQUAL 19)
  message(FATAL_ERROR "LLVM 19 not found: run `make deps` (Debian package llvm-19-dev)")
endif()
message(STATUS "LLVM ${LLVM_PACKAGE_VERSION} at ${LLVM_DIR}")
separate_arguments(TESSERA_LLVM_DEFS NATIVE_COMMAND "${LLVM_DEFINITIONS}")

# Adds LLVM's headers and the static libraries of COMPONENTS to TARGET.
function(tessera_link_llvm target)
  llvm_map_components_to_libnames(libs ${ARGN})
  target_include_directories(${target} SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS})
  target_compile_definitions(${target} PRIVATE ${TESSERA_LLVM_DEFS})
  target_link_libraries(${target} PRIVATE ${libs})
endfunction()

find_path(DOCTEST_INCLUDE_DIR doctest/doctest.h)
find_path(NLOHMANN_JSON_INCLUDE_DIR nlohmann/json.hpp)

set(TESSERA_LLVM_TOOLS_DIR "${LLVM_TOOLS_BINARY_DIR}")
find_program(FILECHECK_EXECUTABLE FileCheck HINTS ${LLVM_TOOLS_BINARY_DIR} /usr/lib/llvm-19/bin)
find_program(LIT_EXECUTABLE NAMES lit llvm-lit lit.py
  HINTS /usr/lib/llvm-19/build/utils/lit ${LLVM_TOOLS_BINARY_DIR})

if(DEFINED ENV{CUDA_HOME})
  set(TESSERA_CUDA_HOME "$ENV{CUDA_HOME}")
else()
  set(TESSERA_CUDA_HOME "/usr/local/cuda")
endif()
if(EXISTS "${TESSERA_CUDA_HOME}/bin/ptxas")
  set(TESSERA_HAVE_CUDA ON)
  message(STATUS "CUDA toolkit at ${TESSERA_CUDA_HOME}")
else()
  set(TESSERA_HAVE_CUDA OFF)
  message(WARNING "CUDA toolkit not found at ${TESSERA_CUDA_HOME} (set CUDA_HOME): "
                  "cubin output and the GPU runtime are disabled")
endif()
