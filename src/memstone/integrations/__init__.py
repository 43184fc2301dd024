"""Adapters that let other frameworks keep their memories in memstone (each needs its optional extra)."""
