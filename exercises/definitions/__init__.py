"""The exercises and questions of each notebook, one module per notebook (see
``exercises.core.registry.NOTEBOOKS``). Each module only builds data and registers it."""
