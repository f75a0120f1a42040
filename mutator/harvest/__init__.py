"""`mutate harvest`: the corpus the user already has (test files and reproducer scripts)."""
