"""The GPU tier: the frameworks' device checks (torch_*, tf_*: placement, correctness, training, speed,
collectives; what both share: matmul, timing) and the GPU extension packages (ext*: imported in the library
tier, called once here)."""
