"""Rules on the base image: its tag and CUDA, the frameworks it provides, NGC's images, the accounts it holds."""
