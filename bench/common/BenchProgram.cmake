# tessera_bench(<name> SOURCE <file.cpp> [FLAGS <tesserac flags...>] [GPU_OR_CPU] MODULES <example names...>):
# compiles examples/<module>.tessera with tesserac and the flags into objects and headers, and
# builds the benchmark program <name> from the source, the objects and libtessera_rt. GPU_OR_CPU
# adds the targets of a benchmark that runs on either: sm_80 and sm_90a where CUDA is found,
# the CPU executor otherwise.
function(tessera_bench name)
  cmake_parse_arguments(B "GPU_OR_CPU" "SOURCE" "FLAGS;MODULES" ${ARGN})
  if(B_GPU_OR_CPU AND TESSERA_HAVE_CUDA)
    list(APPEND B_FLAGS --gpu=sm_80,sm_90a)
  elseif(B_GPU_OR_CPU)
    list(APPEND B_FLAGS --target=cpu)
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR})
  set(objs)
  foreach(module ${B_MODULES})
    set(src ${PROJECT_SOURCE_DIR}/examples/${module}.tessera)
    add_custom_command(OUTPUT ${dir}/${module}.o ${dir}/${module}.h
      COMMAND tesserac ${src} ${B_FLAGS} -o ${dir}/${module}.o -H ${dir}/${module}.h
      DEPENDS tesserac ${src} COMMENT "tesserac ${module} (${name})")
    list(APPEND objs ${dir}/${module}.o ${dir}/${module}.h)
  endforeach()
  add_executable(${name} ${B_SOURCE} ${objs})
  target_include_directories(${name} PRIVATE ${dir} ${PROJECT_SOURCE_DIR}/runtime/include
                             ${PROJECT_SOURCE_DIR}/bench/common)
  target_link_libraries(${name} PRIVATE tessera_runtime)
endfunction()
