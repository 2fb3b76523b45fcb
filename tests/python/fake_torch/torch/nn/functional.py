from torch import _amp_core as core


def mse_loss(a, b):
    dtype = core.float32 if core._ac["enabled"] else a.dtype  # autocast's fp32 list
    return core.Tensor((a.value - b.value) ** 2, dtype, True, False)


def binary_cross_entropy(a, b):
    if core._ac["enabled"]:
        raise RuntimeError("torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.")
    return core.Tensor(abs(a.value - b.value), a.dtype, True, False)
