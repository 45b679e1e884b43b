"""Rules on the driver and the GPUs: the host driver, the GPUs' kernels, the platform (WSL 2), CPU-only images."""
