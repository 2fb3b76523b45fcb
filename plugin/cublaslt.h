// cuBLASLt, loaded at run time (dlopen), so that the plugin loads and its
// copy and launch cases run where cuBLAS is missing. The declarations come
// from the toolkit's own header; only the calls go through pointers.
#pragma once

#include <cublasLt.h>

#include <string>

namespace gpuenv_plugin {

struct CublasLt {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtGetVersion) version;
  decltype(&cublasLtGetStatusString) status_string;
  decltype(&cublasLtMatmulDescCreate) desc_create;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set;
  decltype(&cublasLtMatrixLayoutCreate) layout_create;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic;
  decltype(&cublasLtMatmul) matmul;
  std::string path;
};

/// The loaded library (once per process); nullptr with the reason in *err.
/// $GPUENV_CUBLASLT_LIBRARY first, then libcublasLt.so.<major> through the
/// loader, then the toolkit's usual folders.
const CublasLt* cublaslt(std::string* err);

}  // namespace gpuenv_plugin
