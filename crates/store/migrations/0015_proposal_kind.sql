-- What a proposal changes, stored rather than guessed from its tool's name: `note` (the notes'
-- gate) or `graph` (the graph's gate). Proposals stored before this were told apart by their tool.
ALTER TABLE proposals ADD COLUMN kind TEXT NOT NULL DEFAULT 'note' CHECK (kind IN ('note', 'graph'));
UPDATE proposals SET kind = 'graph'
 WHERE tool IN ('connect', 'set_connection_type', 'disconnect', 'write_connection_note');
