from torch import _C


class cuBLASModule:
    def __getattr__(self, name):
        if name == "allow_tf32":
            return _C._get_cublas_allow_tf32()
        if name == "fp32_precision":
            return _C.state["new"]
        raise AttributeError(name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            return _C._set_cublas_allow_tf32(value)
        if name == "fp32_precision":
            _C.state["new"] = value
            return None
        return super().__setattr__(name, value)


matmul = cuBLASModule()
