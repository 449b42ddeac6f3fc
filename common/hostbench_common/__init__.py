"""What backend, runner and CLI share, declared once: the experiment table (experiments.py), the kernels'
parameter schemas and cross-field rules as `hbk <kernel> --describe` publishes them (describe.py, schema.py), and
the reference tools' argv builders and parsers (reftools/). The standard library only, Python 3.9 and later: the
runner imports it on the hosts it measures."""
