"""What every lab is built from: ``figure_view`` (one figure redrawn in place), ``layout`` (the
root box, rows of controls, sliders, the verdict) and ``own_function`` (the switch that runs a lab
on the function the learner wrote). Importing this package imports nothing heavy."""
