-- The notes' history is budgeted per agent connection: every change counts the bytes its
-- connection's versions keep, so those are found by connection.
CREATE INDEX note_changes_by_connection ON note_changes (connection_id);

-- A change is recorded before its files are written and marked done once they all are (for an
-- accepted proposal, in the same transaction as its decision). A change left not done by a process
-- that died is undone by the next writer (`notes::changes::recover`), so a move or an accept is
-- whole or absent after a crash.
ALTER TABLE note_changes ADD COLUMN done INTEGER NOT NULL DEFAULT 1;
