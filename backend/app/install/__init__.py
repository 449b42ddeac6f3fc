"""The runner installer the server hands out: the install script and the runner tarball (runner/ sources)."""
