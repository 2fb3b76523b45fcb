_compiling = [False]  # a test sets it to stand for torch.compile's tracing


def is_compiling():
    return _compiling[0]
