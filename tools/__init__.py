"""Developer tools that run from a checkout, outside the installed envgen package."""
