"""Mutation: operators that rewrite a program's compiled region, and the Mutator that picks them."""
