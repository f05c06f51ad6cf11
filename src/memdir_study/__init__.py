"""The study: the apparatus that reproduces the paper's experiments on top of the product.

The benchmarks' loaders (`bench`), the roles only the study plays and each variant's role
settings (`roles`, with their prompts in `prompts/`), the memory variants (`variants`), the
conversational evaluation (`eval`), the skill setting (`skills`), the run-folder kernel both
write through (`runfolder`) and the Ray setup they share (`cluster`). The study imports the
product (store, tools, agents, models, analytics, chatlogs); the product imports nothing from
here, which
`tests/project/test_import_direction.py` enforces. docs/study.md names the paper and its design.
"""
