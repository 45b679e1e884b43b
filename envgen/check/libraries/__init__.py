"""Rules on the CUDA libraries as the loader resolves them: missing sonames, wheels' needs, CUDA shipped twice."""
