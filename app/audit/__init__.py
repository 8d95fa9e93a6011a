"""Auditors' reads of the journal: verify, export, reconciliation reports."""
