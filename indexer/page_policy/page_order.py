"""The order and the bounds of a page's links and of the open tasks that name it.

Both pages stores read in this order (indexer/pages/store.py,
daemon/postgres/pages_store.py), so a card shows the same links and tasks
on either backend.
"""

from __future__ import annotations

# a card takes at most this many links of each direction before it drops repeats
LINKS_PER_DIRECTION = 60
# what dates an open task elsewhere: its due date (at midnight UTC, as every other date
# reads), else its page's last change; both stores order by this same SQL text
TASK_DATE = "COALESCE(l.due || 'T00:00:00.000Z', p.updated_at)"
