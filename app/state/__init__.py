"""The floor's state and its views: synchronous and free of I/O."""
