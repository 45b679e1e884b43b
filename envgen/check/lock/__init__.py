"""Rules on the lock: missing, stale, or leaving lines floating."""
