"""What the writer refuses a request with; app/api/problems.py maps each to its status."""


class Conflict(Exception):
    """Same (table, round, kind) as an earlier event, with a different body (409)."""


class Unavailable(Exception):
    """The journal cannot be written: nothing was recorded (503)."""


class Standby(Unavailable):
    """Another writer holds the lease: this one records nothing (503, Retry-After)."""


class AnswerFailed(Exception):
    """The event is recorded, but building its answer failed (a bug): 500, and a retry
    gets the answer (the journal has the event, once)."""


class Unrecorded(Exception):
    """Applying an event failed past the core's checks (a bug): the state is back where
    it was and nothing of the event was recorded (500)."""
