"""The single writer: owns the floor's state, applies requests in order, commits them in groups."""
