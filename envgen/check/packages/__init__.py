"""Rules on the Python packages the plan installs: names, pins, the frameworks' and the combined Requires-Dist."""
