"""Integrations of anatid with agent frameworks. Each lives in its own subpackage and imports
its framework lazily, so `import anatid` never needs an optional dependency."""
