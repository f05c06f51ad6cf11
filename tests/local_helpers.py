"""What the local_model tier's test files share: the skip marker (the tier runs when the model is
installed and says why it is skipped otherwise) and the two seeded people its questions ask
about, so every file asks the same store the same things."""

from __future__ import annotations

import pytest

from memdir.models.local import missing_reason

REASON = missing_reason()
LOCAL_TIER = [
    pytest.mark.local_model,
    pytest.mark.skipif(REASON is not None, reason=f"local model not available: {REASON}"),
]

ALICE = (
    "---\nname: alice\ndescription: Alice: diet, job and home\n---\n# Alice\n## Diet\n"
    "- alice | diet: vegan (since 2023-05-02) [S2T1]\n"
    "- ~~alice | diet: vegetarian~~ (until 2023-05-02) [S1T4]\n"
    "## Work\n- 2023-03-01: Alice started as a nurse at St. Mary's hospital [S1T2]\n"
)
BOB = "---\nname: bob\ndescription: Bob: hobbies\n---\n# Bob\n## Hobbies\n- Bob plays the cello [S1T3]\n"
