"""The report's random streams: every sample is drawn from ``np.random.default_rng([seed,
stream])`` with a stream of its own, so that no sample shifts another."""

#: The query sample, a quick run's gallery, geometry's rows, the probes' rows, PCA's fit rows,
#: the certificates' sample, the probes' split, the index curves' queries and the scored queries.
QUERIES, GALLERY, GEOMETRY, PROBE, FIT, CERT, SPLIT, CURVE, SCORED = 1, 2, 3, 4, 5, 6, 7, 8, 9
