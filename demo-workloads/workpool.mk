# workpool: the reference scheduler library (filled in by its issue).
