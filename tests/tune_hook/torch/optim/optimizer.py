"""Stand-in torch.optim.optimizer: the global step hooks of torch 2.x."""
_POST_HOOKS = []


def register_optimizer_step_post_hook(hook):
    _POST_HOOKS.append(hook)


class Optimizer:
    def __init__(self, params=(), lr=0.1):
        self.lr = lr

    def step(self, closure=None):
        for hook in _POST_HOOKS:
            hook(self, (), {})
