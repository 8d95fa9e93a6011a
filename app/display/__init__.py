"""Displays: the broadcaster, its Redis backend, the display routes and page."""
