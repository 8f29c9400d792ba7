"""Is Friday's menu safe? Text search alone cannot say; hybrid recall can.

Months of ordinary household facts, one dinner, and an allergy that neither the
question nor any single stored sentence connects to the menu: Ada reacts to peanuts
(said about Ada), the satay sauce is made with peanuts (said about the dish), the satay
is on Friday's menu, Ada is coming. The graph arm walks dinner -> guest -> ingredient ->
dish; BM25 alone only sees the words of the question.

    python examples/dinner_party.py
"""
from __future__ import annotations

import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from anatid import Anatid

START = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)

CHORES = ["Bin day moved to Tuesday", "The boiler was serviced", "Council tax is paid by direct debit",
          "The spare key is with the neighbour at number 12", "Milo's swimming lesson is at 5pm",
          "The car's MOT is due in March", "We switched broadband to a fibre plan",
          "The dishwasher needs a new filter", "Grandma's birthday is on the 14th",
          "The garden fence was repainted green"]

FACTS = [  # (text, entities)
    ("Ada's throat swelled up at the school picnic; the doctor said it was the peanut butter",
     ["Ada", "Peanuts"]),
    ("The satay sauce from the corner shop is made with ground peanuts", ["Satay", "Peanuts"]),
    ("Friday dinner menu: chicken satay skewers, rice, and a mango salad", ["Friday dinner", "Satay"]),
    ("Ada and her dad are coming round on Friday", ["Friday dinner", "Ada"]),
    ("Tom prefers his rice without coriander", ["Tom"]),
]

RELATIONS = [("Friday dinner", "Ada", "guest"), ("Friday dinner", "Satay", "on the menu"),
             ("Satay", "Peanuts", "contains"), ("Ada", "Peanuts", "reacts to")]

QUESTION = "Is the Friday dinner menu safe for everyone?"


def build(db: Anatid) -> None:
    """Write the household's months of facts (also used by test_sql_docs.py)."""
    t = START
    for week in range(16):
        for chore in CHORES:
            t += timedelta(hours=7)
            db.remember(f"{chore} (week {week + 1})", entities=["House"], now=t)
    for text, entities in FACTS:
        t += timedelta(days=1)
        db.remember(text, entities=entities, now=t)
    for a, b, kind in RELATIONS:
        t += timedelta(minutes=5)
        db.relate(a, b, kind, now=t)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, Anatid.open(str(Path(tmp) / "home.anatid")) as db:
        build(db)
        print(f"Q: {QUESTION}  (engine: {'native' if db.native.loaded else 'SQL'})\n")
        text_only = [h for h in db.recall(QUESTION, k=5, weights={"graph": 0.0}) if "text" in h.sources]
        print("Text search alone finds:")
        for h in text_only:
            print(f"  - {h.content}")
        print("\nHybrid recall (text + graph) finds:")
        for h in db.recall(QUESTION, k=6):
            print(f"  - [{', '.join(h.sources)}{'' if h.hop is None else f', hop {h.hop}'}] {h.content}")


if __name__ == "__main__":
    main()
