#include "ops/cuda/cublas_lt_library.cuh"

#include <dlfcn.h>

#include <string>

namespace altgrad::ops::cuda {
namespace {

// The dynamic loader's last error, or a placeholder where it has none.
std::string loader_error() {
  const char* error = dlerror();
  return error != nullptr ? error : "no error reported";
}

template <typename Function>
void resolve(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  if (function == nullptr) throw std::runtime_error(std::string("cuBLASLt has no ") + name + ": " + loader_error());
}

CublasLtLibrary load() {
  const std::string soname = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
  // Never unloaded: the handles and plans made from it live until the process ends.
  void* library = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string errors = soname + ": " + loader_error();
#if defined(ALTGRAD_CUBLASLT_PATH)
  if (library == nullptr) {
    library = dlopen(ALTGRAD_CUBLASLT_PATH, RTLD_NOW | RTLD_LOCAL);
    errors += "; " + std::string(ALTGRAD_CUBLASLT_PATH) + ": " + loader_error();
  }
#endif
  if (library == nullptr) throw std::runtime_error("cannot load cuBLASLt (" + errors + ")");
  CublasLtLibrary lt{};
  resolve(library, "cublasLtCreate", lt.create);
  resolve(library, "cublasLtDestroy", lt.destroy);
  resolve(library, "cublasLtGetStatusString", lt.status_string);
  resolve(library, "cublasLtMatmulDescCreate", lt.matmul_desc_create);
  resolve(library, "cublasLtMatmulDescDestroy", lt.matmul_desc_destroy);
  resolve(library, "cublasLtMatmulDescSetAttribute", lt.matmul_desc_set_attribute);
  resolve(library, "cublasLtMatrixLayoutCreate", lt.matrix_layout_create);
  resolve(library, "cublasLtMatrixLayoutDestroy", lt.matrix_layout_destroy);
  resolve(library, "cublasLtMatmulPreferenceCreate", lt.preference_create);
  resolve(library, "cublasLtMatmulPreferenceDestroy", lt.preference_destroy);
  resolve(library, "cublasLtMatmulPreferenceSetAttribute", lt.preference_set_attribute);
  resolve(library, "cublasLtMatmulAlgoGetHeuristic", lt.algo_get_heuristic);
  resolve(library, "cublasLtMatmul", lt.matmul);
  return lt;
}

}  // namespace

const CublasLtLibrary& cublas_lt() {
  static const CublasLtLibrary library = load();
  return library;
}

}  // namespace altgrad::ops::cuda
