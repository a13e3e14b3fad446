"""Scenarios that run the whole system offline."""
