"""Learning-rate schedulers (in progress)."""
