"""A conversational ruler: seeded multi-session conversations and per-class recall scores."""
