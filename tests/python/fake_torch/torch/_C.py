import os

_on = os.environ.get("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE") == "1"
state = {"legacy_tf32": _on, "new": "tf32" if _on else "none"}


def _set_cublas_allow_tf32(b):
    state["legacy_tf32"] = bool(b)
    state["new"] = "tf32" if b else "ieee"


def _get_cublas_allow_tf32():
    if state["legacy_tf32"] != (state["new"] == "tf32"):
        raise RuntimeError("PyTorch is checking whether allow_tf32_new is enabled for cuBlas matmul, "
                           "Current status indicate that you have used mix of the legacy and new APIs")
    return state["legacy_tf32"]
