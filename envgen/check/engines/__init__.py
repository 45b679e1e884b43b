"""Rules on the serving engines (vLLM, SGLang): their pins, kernel packages and compiled GPU code."""
