"""Stand-in Lightning: Trainer.fit() takes the module's own DataLoader and
re-creates it as Lightning does for its sampler, from the loader's attributes."""
