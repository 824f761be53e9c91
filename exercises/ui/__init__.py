"""An old package path, kept for notebooks saved from earlier releases (their modules are now the
engine's, engine/ui and engine/notebook.py): each module here only imports, from
exercises/compat.py, the names those notebooks import."""
