"""Rules on the frameworks: Python, PyTorch, TensorFlow, cuDNN and the GPU extension packages."""
