-- A call of a write tool records the note it named and the connection's write mode then; NULL for
-- every other call. The activity page shows changes apart from reads by these columns.
ALTER TABLE audit ADD COLUMN path TEXT;
ALTER TABLE audit ADD COLUMN write_mode TEXT;
CREATE INDEX audit_changes ON audit (id) WHERE write_mode IS NOT NULL;
