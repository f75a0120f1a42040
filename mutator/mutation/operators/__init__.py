"""Operators, one module per group of taxonomy families; `registry` collects them."""
