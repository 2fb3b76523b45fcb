"""Stand-in torch.utils.data.dataloader: the iterator base class whose __next__ hands out batches."""


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._left = len(loader.dataset) // max(1, loader.batch_size)

    def __iter__(self):
        return self

    def __next__(self):
        if self._left == 0:
            raise StopIteration
        self._left -= 1
        return self._next_data()

    def _next_data(self):
        return [0]


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    pass
