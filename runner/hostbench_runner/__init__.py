"""hostbench runner daemon: claims runs from the server, runs the native kernels, streams samples."""

from __future__ import annotations

__version__ = "0.1.0"
