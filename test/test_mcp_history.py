"""The MCP get tool's as_of goes through the facade's get(as_of=): the version believed then."""
from __future__ import annotations

import pytest

from anatid import Anatid, utcnow
from anatid.errors import NotFoundError
from anatid.integrations.mcp import history


def test_get_as_of_is_the_version_believed_then():
    with Anatid.open(":memory:") as db:
        before = utcnow()
        m = db.remember("Ada drinks tea", ["Ada"])
        t1 = utcnow()
        db.update(m.memory_id, "Ada drinks coffee", expected_version=1)
        assert history.get(db, m.memory_id, None).content == "Ada drinks coffee"
        then = history.get(db, str(m.memory_id), t1)
        assert (then.content, then.version, then.entities) == ("Ada drinks tea", 1, ("Ada",))
        with pytest.raises(NotFoundError):
            history.get(db, m.memory_id, before)
