"""Build tools for the course site: the course wheel, the Pyodide lock, the site itself."""
