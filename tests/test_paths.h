// Where the tests find the binary under test, their data and the stand-in
// libraries. The paths are compiled into one generated file
// (build/tests/test_paths.cc, tests/CMakeLists.txt) rather than passed to every
// test source as -D flags: a source whose command line holds no checkout path
// compiles the same in every clone, so ccache hits across clones.
#pragma once

#include <string>

namespace gpuenv::test_paths {

std::string gpuenv_bin();       // the gpuenv binary this build linked
std::string tests_dir();        // the source tree's tests/
std::string fake_dir();         // the stand-in NVML, CUDA and bench plugin
std::string kubelet_python();   // a Python with grpcio, for the stand-in kubelet
std::string kubelet_pb2_dir();  // the stand-in kubelet's generated messages
std::string kubelet_helper();   // gpuenv-kubelet, the client export runs
std::string nvcc_fatbins();     // inspect's fixtures built by this machine's nvcc; empty without nvcc

}  // namespace gpuenv::test_paths
