"""The operator console: one web page for supervisors, operators and auditors."""
