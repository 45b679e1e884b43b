"""The library tier: what needs no GPU (the CUDA libraries load and agree with what the frameworks were built
with, a base's provided packages, every installed distribution imports)."""
