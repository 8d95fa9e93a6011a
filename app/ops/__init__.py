"""Operations: Prometheus metrics and logs."""
