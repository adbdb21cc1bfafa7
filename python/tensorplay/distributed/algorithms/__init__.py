"""tensorplay.distributed.algorithms: what DDP's training loop can plug in (communication hooks)."""
