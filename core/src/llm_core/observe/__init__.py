"""Observers: the hooks that hear of every call (:mod:`.observers`), the scopes calls run in
(:mod:`.scopes`) and an observer that works off the caller's thread (:mod:`.background`)."""
