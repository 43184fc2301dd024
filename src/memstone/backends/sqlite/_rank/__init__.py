"""``memstone_rank``, the FTS5 ranking function in C (``memstone_rank.c``), and how it is built (``build``)."""
