# example.py - run with: mpirun -np 4 python3 example.py
import numpy as np
from mpi4py import MPI
import gpureduce as gr

rank = MPI.COMM_WORLD.Get_rank()
x = np.random.default_rng(rank).standard_normal(1_000_000)  # this rank's part of the array
s = gr.sum(x, mode="exact", full=True)           # correctly rounded: the same bits for any np
v, i = gr.argmax(x, all_ranks=True)              # every rank gets (value, global index)
res = gr.batch([("dot", x, x), ("nrm2", x)])     # two reductions, one MPI collective
if rank == 0:
    print(f"sum {s.value} ({s.hex}), max {v} at {i}, x.x {res[0]}, |x| {res[1]}")
