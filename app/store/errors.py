"""What the journal port raises, apart from its adapters (no driver loaded to catch them)."""


class JournalUnavailable(Exception):
    """The journal cannot be reached or a write failed: the service answers 503.

    After a failed `append` the outcome is unknown: the connection may have broken after
    PostgreSQL committed. The writer must not reuse the batch's seqs before it has read
    `last()` again (and, for keyed entries, `lookup`) once the journal is back.
    """


class DuplicateEntry(Exception):
    """A row's seq or idem_key is already in the journal; nothing of the batch was written."""


class Deposed(JournalUnavailable):
    """A fenced append found another writer's epoch in the lease: a standby took over.
    Nothing of the batch was written, and nothing of ours ever will be again: the writer
    refuses what it holds (503, like any failed commit) and becomes a standby."""


class ChainBroken(JournalUnavailable):
    """An append does not follow the database's head: its rows were written after seq
    `first_seq - 1`, but the journal's head is `found_seq` with hash `found_hash` (rows
    were lost, as when a database is rolled back, or another history was written).
    Nothing of the batch was written. The writer refuses what it holds (503) and rebuilds
    its state from the database, which is the record."""

    def __init__(self, message: str, *, found_seq: int, found_hash: str, first_seq: int) -> None:
        super().__init__(message)
        self.found_seq, self.found_hash, self.first_seq = found_seq, found_hash, first_seq


class BrokenChain(Exception):
    """The journal read does not hold together (app/store/continuity.py): entry `seq` does
    not follow its predecessor (a gap, or a hash that does not chain), or the snapshot at
    `seq` is not the state after the journal's entry there. A process refuses to lead on
    it; `jackpot verify` says more."""

    def __init__(self, message: str, *, seq: int) -> None:
        super().__init__(message)
        self.seq = seq
