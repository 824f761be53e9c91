"""Interactive parts of the course: labs, question widgets, feedback controls, progress view.

Importing this package imports nothing heavy; each module imports ipywidgets and
matplotlib itself.
"""
