"""What the tests share: the stores they run on (`backends`), the PostgreSQL database
(`postgres_db`), the ways a run is driven (`run_paths`), waiting on conditions (`waiting`),
process exits (`exiting`), hypothesis strategies (`strategies`) and the JavaScript kit
(`node_kit`). Fixtures stay in the conftest files; these are plain modules."""
