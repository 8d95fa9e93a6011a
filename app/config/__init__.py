"""Configuration: the floor file and the settings."""
