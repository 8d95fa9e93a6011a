"""Storage: the journal port and its adapters, the database, snapshots."""
