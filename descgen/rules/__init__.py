"""The rules as data: the rule language (:mod:`descgen.rules.language`: a catalog rule's checks,
declared once in ``tables/rules.toml`` and compiled by every back end) and the tables its
expressions read (:mod:`descgen.rules.tables`)."""
