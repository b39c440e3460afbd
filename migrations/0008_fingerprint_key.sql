-- The key behind local identity fingerprints, when the board carries its own: a board moved or
-- restored from a backup (`wire move`, `wire restore`) keeps the key it had, so every local identity
-- keeps its id on its new database. Null (every board until then): the key is derived as before
-- (docs/identity.md). FINGERPRINT_SECRET, when set, still wins. Never served by any route.
alter table board add column fingerprint_key text check (fingerprint_key <> '');
