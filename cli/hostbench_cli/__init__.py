"""The product's command: `./hostbench` argv -> the package that does it (__main__), and the client of a hostbench
server's API (remote, mesh, checks, slurm)."""
