"""The labs of the averages course, one package per notebook (``weights``)."""
