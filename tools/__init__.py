"""What a run uses around the paper's math: flags from a config dataclass, threads and the code
version (cli), torchrun's processes (ranks), mean +- SEM and paired tests (stats), tables, logs
and curves (report) and App. C's arm and hint tables (diagnostics).

It sits above the game and the metrics it tabulates (game/, metrics) and below everything that
parses flags, runs on several processes or writes tables (lm/, update, evaluate, train, ...).
"""
