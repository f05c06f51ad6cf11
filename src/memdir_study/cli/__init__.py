"""`memdir study ...`: the study's commands, added to `memdir` by the study's plugin
(`memdir_study/plugin.py`). One rule places a command here: it needs the study's benchmark
data or writes and reads its run folders. `study_cmds.py` lists the topic modules
(`STUDY_MODULES`), each imported when one of its commands runs, as the product's are
(`memdir/cli/topics.py`): `eval_cmd.py`, `skills_cmd.py`, `report_cmd.py`, `data_cmd.py`,
`bench_cmd.py` (+ `bench_writes_cmd.py`); `executor_opts.py` holds `--executor`,
`--address` and `--cells-at-once` for eval and skills. The options they share with the
product's commands (`--base-url`, `--tool-set`, ROOT) come from `memdir/cli/`.
"""
