from torch import _amp_core as core


class autocast:
    def __init__(self, device_type, dtype=None, enabled=True):
        self.device_type, self.fast_dtype, self._enabled = device_type, dtype or core.bfloat16, enabled

    def __enter__(self):
        self.prev = (core._ac["enabled"], core._ac["dtype"])
        core._ac["enabled"], core._ac["dtype"] = self._enabled, self.fast_dtype
        core._ac["nesting"] += 1
        return self

    def __exit__(self, *exc):
        core._ac["nesting"] -= 1
        if core._ac["nesting"] == 0:
            core._ac["cache"].clear()
        core._ac["enabled"], core._ac["dtype"] = self.prev
        return False
