"""The fault and load harness: `./hostbench chaos`, `load`, `size`, `faults`, `enrol-load` and the Slurm lab's
trial, each against a real stack of its own (hostbench_stack)."""
