"""The run pages of `memdir ui`, added by the study's plugin (`memdir_study/plugin.py`): the
run folders found under `--runs` (`runs.py`), a run's report with its plots, its answers with
their citations, a benchmark's source turn (`views_runs.py`), each table read a bounded page
at a time (`table_page.py`), rendered from `templates/`, which extend the UI's `base.html`.
"""
