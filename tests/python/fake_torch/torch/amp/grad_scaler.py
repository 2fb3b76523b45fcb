class GradScaler:
    def __init__(self, device="cuda", enabled=True):
        self.enabled = enabled
