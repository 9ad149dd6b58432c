"""Tournaments: the schedule of deals and seatings, chunked work over joblib or dask,
the run folder (parquet parts, summary, manifest) and resuming."""
