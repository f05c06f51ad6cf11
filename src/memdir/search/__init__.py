"""Search: the indexes derived from a store's files and the rankings over them."""
