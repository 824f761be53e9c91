"""The exercises of the averages course, one module per notebook (named in its metadata)."""
