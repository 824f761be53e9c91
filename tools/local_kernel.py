"""The kernel name `python` kept in a local JupyterLab, as JupyterLite names its kernel.

The course's notebooks name their kernel `python` (JupyterLite's Pyodide kernel). jupyter_client
turns the name `python` into `python3` whenever a kernel is started, so a local JupyterLab
starts `python3` instead of the course's kernel spec and rewrites every notebook's kernel name,
and a notebook saved then would make JupyterLite ask each learner to choose a kernel. This
kernel manager starts the kernel spec by the name it is given; `./course lab` and the tests'
JupyterLab use it (tools.lab.KERNEL_MANAGER).
"""

from jupyter_server.services.kernels.kernelmanager import ServerKernelManager
from traitlets import observe


class NamedKernelManager(ServerKernelManager):
    """A ServerKernelManager that keeps the kernel name `python` as it is."""

    @observe("kernel_name")
    def _kernel_name_changed(self, change):
        self._kernel_spec = None
