"""Training the course's small model with PyTorch (see README.md): corpus, the toy language;
train, the model and its training run. Run from the repository root: python -m training.train."""
