"""An old package path, kept for notebooks saved from earlier releases (its modules are now the
engine's, engine/presentation): each module here only imports, from exercises/compat.py, the names
those notebooks import."""
