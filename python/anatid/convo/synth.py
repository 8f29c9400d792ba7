"""A seeded generator of multi-session conversations, hard in the ways real ones are.

Each conversation is two speakers over dated sessions; every turn is one memory. What
makes it hard, on purpose:
- both speakers' names are on every one of their turns (hubs) and turns often greet the
  other speaker by name, so a name in a question matches hundreds of turns;
- a fact is often split over two adjacent turns: the topic in a question ("How was the
  pottery class?") and the detail in a vague answer ("Loved it! I made a blue bowl."),
  so the turn holding the answer shares few words with the question;
- questions paraphrase (synonyms for the activity), come sessions after the fact, and
  filler turns reuse the same everyday words;
- multi-hop questions need turns from several sessions, joined by a rare name (a
  relative, a place) that appears on each of them;
- temporal questions ask "when", the answer turn says "yesterday" and the date is the
  session's; adversarial questions name the wrong speaker.

Questions carry their evidence turns (indexes into the conversation's turns) and a
class; nothing here is drawn from any public benchmark.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

CLASSES = ("single-hop", "multi-hop", "temporal", "open-domain", "adversarial")

SPEAKERS = ["Caroline", "Melanie", "Jonah", "Gina", "Priya", "Tomas", "Aiko", "Rafael", "Nadia", "Oren",
            "Lena", "Marcus", "Ines", "Kofi", "Sven", "Yara", "Dmitri", "Amara", "Bruno", "Keiko"]
RELATIVES = ["sister", "brother", "cousin", "aunt", "uncle", "neighbour", "roommate", "colleague"]
RARE_NAMES = ["Dario", "Fenna", "Quillon", "Marisol", "Tobiah", "Elspeth", "Idris", "Saoirse", "Lucan", "Weylin",
              "Ottilie", "Caspian", "Rowena", "Anselm", "Briony", "Thaddeus", "Zinnia", "Evander", "Linnea", "Corwin",
              "Isolde", "Ambrose", "Delphine", "Florian", "Hesper", "Jory", "Kestrel", "Lorcan", "Mireille", "Niamh"]
PLACES = ["Fernwood Bakery", "Harbor Clinic", "Oakridge Library", "Bluewater Marina", "Cedar Lane Studio",
          "Northgate Brewery", "Willow Creek Farm", "Summit Climbing Gym", "Lantern Theater", "Pinecrest Hospital",
          "Maple Row Bookshop", "Ironside Garage", "Silverleaf Cafe", "Riverside Kennel", "Copperfield School"]

# activity: (phrase in the conversation, paraphrase in questions, details the answer may carry)
ACTIVITIES = [
    ("pottery class", "ceramics workshop", ["a blue bowl", "a lopsided mug", "a glazed vase", "a tiny teapot"]),
    ("camping trip", "night outdoors in a tent", ["Lake Tahoe", "the Redwood grove", "Moss Canyon", "Crater Ridge"]),
    ("charity run", "fundraising race", ["the animal shelter", "the children's hospital", "the food bank", "clean rivers"]),
    ("guitar lessons", "learning to play a stringed instrument", ["a flamenco song", "Blackbird", "a blues riff"]),
    ("book club", "reading group", ["a mystery novel", "a memoir about sailing", "a sci-fi classic", "poetry"]),
    ("painting", "making art on canvas", ["a sunset over the lake", "a portrait of my grandmother", "sunflowers"]),
    ("baking", "making pastries in the oven", ["sourdough bread", "lemon tarts", "cinnamon rolls", "a carrot cake"]),
    ("volunteering", "unpaid community work", ["the soup kitchen", "a literacy program", "the animal rescue"]),
    ("road trip", "long drive across the country", ["the Grand Canyon", "the Pacific coast", "Yellowstone"]),
    ("concert", "live music show", ["a jazz quartet", "an indie rock band", "the symphony orchestra"]),
    ("gardening", "growing plants in the yard", ["tomatoes", "a row of lavender", "pumpkins", "strawberries"]),
    ("yoga retreat", "meditation and stretching getaway", ["the mountains", "a beach in Costa Rica", "a monastery"]),
    ("adoption", "bringing home a new pet", ["a beagle puppy", "two kittens", "a rescue greyhound", "a parrot"]),
    ("marathon training", "preparing for a long-distance race", ["twenty miles", "hill sprints", "a new pair of shoes"]),
    ("cooking class", "culinary lessons", ["Thai curry", "handmade pasta", "sushi rolls", "a French omelette"]),
    ("job interview", "meeting with a potential employer", ["a design firm", "a startup", "the city council"]),
]

FILLER_OPEN = ["Hey {other}! How have you been?", "Hi {other}, long time no talk!", "Good to hear from you, {other}.",
               "Morning {other}! Busy week?", "{other}! I was just thinking about you."]
FILLER = ["Pretty good, just busy with work and the kids.", "Haha, totally agree with you.",
          "That sounds like a great weekend, {other}.", "I know, right? Time flies.",
          "Work has been hectic but I'm managing.", "We should catch up in person soon.",
          "Thanks {other}, that means a lot.", "I've been trying to get more sleep lately.",
          "The weather has been so nice for a walk.", "I can't believe how fast this year is going.",
          "Same here, the weekend went by too quickly.", "Oh nice, tell me more about it some time!",
          "Honestly I just needed a quiet day at home.", "That reminds me, I still owe you a coffee.",
          "How is your family doing, {other}?", "Everyone is fine, thanks for asking!",
          "I saw a funny video about dogs today.", "I might take a class or a trip soon, who knows.",
          "Music always cheers me up after a long day.", "We had pasta for dinner again, haha."]
FILLER_CLOSE = ["Talk soon, {other}!", "Bye {other}, take care!", "Gotta run, chat later!", "See you, {other}!"]
ASK_TOPIC = ["How did the {act} go, {other}?", "Wait, didn't you have a {act} recently?",
             "Tell me about the {act}, {other}!", "So how was your {act}?"]
ANSWER_VAGUE = ["It was amazing! {detail_sentence}", "Honestly, so much fun. {detail_sentence}",
                "Exhausting but worth it. {detail_sentence}", "Loved every minute. {detail_sentence}"]
DETAIL_SENTENCE = ["We ended up with {detail}.", "The highlight was {detail}.", "I'll never forget {detail}.",
                   "It was all about {detail}."]
SELF_REPORT = ["I finally did the {act} I told you about: {detail}!", "Big news: my {act} was a success, {detail}.",
               "So the {act} happened, and {detail} was the best part."]
WHEN_ANSWER = ["Yesterday, actually! {detail_sentence}", "Just last weekend. {detail_sentence}",
               "A couple of days ago. {detail_sentence}"]


@dataclass
class Turn:
    speaker: str
    text: str
    session: int
    date: datetime
    names: list[str] = field(default_factory=list)   # capitalised names mentioned (besides speakers)

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass
class Question:
    question: str
    cls: str
    evidence: list[int]      # turn indexes


@dataclass
class Conversation:
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[Question]
    session_dates: list[datetime]


def _add(turns, speaker, text, session, date, names=()) -> int:
    turns.append(Turn(speaker, text, session, date, list(names)))
    return len(turns) - 1


def conversation(rng: random.Random, *, sessions: int = 12, filler: int = 10) -> Conversation:
    a, b = rng.sample(SPEAKERS, 2)
    start = datetime(2023, 1, 2, 12, tzinfo=timezone.utc) + timedelta(days=rng.randrange(0, 300))
    dates, d = [], start
    for _ in range(sessions):
        dates.append(d)
        d += timedelta(days=rng.randrange(3, 21))
    turns: list[Turn] = []
    questions: list[Question] = []
    acts = rng.sample(ACTIVITIES, len(ACTIVITIES))
    rares = rng.sample(RARE_NAMES, 6)
    places = rng.sample(PLACES, 6)
    # per session, what happens: a list of "events" to interleave with filler
    plan: list[list] = [[] for _ in range(sessions)]
    for i, (act, para, details) in enumerate(acts):
        who = (a, b)[i % 2]
        other = b if who == a else a
        s = rng.randrange(0, sessions - 2)
        detail = rng.choice(details)
        style = rng.random()
        plan[s].append(("fact", who, other, act, para, detail, style, i))
    # multi-hop chains: a rare person, a workplace, a later event at that workplace
    for j in range(3):
        who = (a, b)[j % 2]
        rel, person, place = RELATIVES[rng.randrange(len(RELATIVES))], rares[j], places[j]
        s1 = rng.randrange(0, sessions // 2)
        s2 = rng.randrange(s1 + 1, sessions)
        plan[s1].append(("chain1", who, rel, person, place, j))
        plan[s2].append(("chain2", who, rel, person, place, j))
    # multi-hop aggregation: one rare person mentioned in three sessions, different things
    for j in range(2):
        who = (a, b)[j % 2]
        person = rares[3 + j]
        hobbies = rng.sample(["rugby", "chess", "the cello", "rock climbing", "salsa dancing", "birdwatching"], 3)
        for h, s in zip(hobbies, sorted(rng.sample(range(sessions), 3))):
            plan[s].append(("agg", who, person, h, j))
    pending: dict = {}
    for s in range(sessions):
        date = dates[s]
        events = plan[s]
        rng.shuffle(events)
        speaker_cycle = [a, b]
        _add(turns, a, rng.choice(FILLER_OPEN).format(other=b), s, date)
        _add(turns, b, rng.choice(FILLER).format(other=a), s, date)
        slots = filler
        for ev in events:
            for _ in range(rng.randrange(0, max(1, slots // max(1, len(events))) + 1)):
                sp = speaker_cycle[len(turns) % 2]
                _add(turns, sp, rng.choice(FILLER).format(other=b if sp == a else a), s, date)
            kind = ev[0]
            if kind == "fact":
                _, who, other, act, para, detail, style, i = ev
                if style < 0.55:   # the topic in the other's question, the detail in a vague answer
                    _add(turns, other, rng.choice(ASK_TOPIC).format(act=act, other=who), s, date)
                    temporal = i % 3 == 0
                    tmpl = WHEN_ANSWER if temporal else ANSWER_VAGUE
                    ans = _add(turns, who, rng.choice(tmpl).format(
                        detail_sentence=rng.choice(DETAIL_SENTENCE).format(detail=detail)), s, date)
                else:              # the speaker reports it in one turn
                    temporal = i % 3 == 0
                    ans = _add(turns, who, rng.choice(SELF_REPORT).format(act=act, detail=detail), s, date)
                if temporal:
                    questions.append(Question(f"When did {who} go to the {para}?", "temporal", [ans]))
                elif i % 3 == 1:
                    questions.append(Question(f"What came out of {who}'s {para}?", "single-hop", [ans]))
                else:
                    wrong = other
                    if rng.random() < 0.5:
                        questions.append(Question(f"What did {wrong} get from the {para}?", "adversarial", [ans]))
                    else:
                        questions.append(Question(
                            f"Would {who} enjoy another {para.split()[-1]} like the last one, and why?",
                            "open-domain", [ans]))
            elif kind == "chain1":
                _, who, rel, person, place, j = ev
                idx = _add(turns, who, f"My {rel} {person} just started a new job at {place}.", s, date,
                           [person, place])
                pending[("chain", j)] = idx
            elif kind == "chain2":
                _, who, rel, person, place, j = ev
                prize = ["won an award for the best service in town", "got flooded after the storm",
                         "is moving to a bigger building downtown"][j % 3]
                idx = _add(turns, who, f"Did you hear? {place} {prize}!", s, date, [place])
                first = pending.get(("chain", j))
                if first is not None:
                    questions.append(Question(f"What happened at the place where {who}'s {rel} works?",
                                              "multi-hop", [first, idx]))
            elif kind == "agg":
                _, who, person, hobby, j = ev
                idx = _add(turns, who, f"{person} has been really into {hobby} lately.", s, date, [person])
                pending.setdefault(("agg", j), (who, person, []))[2].append(idx)
        for _ in range(rng.randrange(1, 3)):
            sp = speaker_cycle[len(turns) % 2]
            _add(turns, sp, rng.choice(FILLER).format(other=b if sp == a else a), s, date)
        sp = speaker_cycle[len(turns) % 2]
        _add(turns, sp, rng.choice(FILLER_CLOSE).format(other=b if sp == a else a), s, date)
    for key, val in pending.items():
        if key[0] == "agg":
            who, person, idxs = val
            questions.append(Question(f"Which hobbies has {person} picked up, according to {who}?", "multi-hop",
                                      list(idxs)))
    return Conversation((a, b), turns, questions, dates)


def generate(*, conversations: int = 8, seed: int = 7, sessions: int = 12, filler: int = 10) -> list[Conversation]:
    """`conversations` seeded conversations (the same seed always gives the same text)."""
    rng = random.Random(seed)
    return [conversation(rng, sessions=sessions, filler=filler) for _ in range(conversations)]
