"""Maintainer refresh tools: each reads a saved copy of an upstream page, list or script (``upstream/`` holds
the stored copies) and prints YAML rows or a diff; ``wheel_arch`` may also stream a wheel from a URL. Nothing here
runs during ``envgen check``; the tests run the tools on stored inputs only. See README.md."""
