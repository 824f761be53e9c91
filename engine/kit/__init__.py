"""What every lab of a course is built from: ``figure_view`` (one figure redrawn in place; built from
``figure_parts``, ``figure_layout``, ``regions``, ``png`` and ``text_cache``), ``layout`` (the
root box, rows of controls, sliders, the verdict), ``own_function`` (the switch that runs a lab
on the function the learner wrote) and ``precomputed`` (results no learner input changes,
computed when the course is built and looked up). Importing this package imports nothing heavy."""
