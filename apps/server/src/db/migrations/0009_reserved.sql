-- Placeholder: number 0009 belongs to another branch (DELEGATE settlement wiring). The migrator
-- refuses gaps, so this empty step keeps the card rail's 0010 applicable on its own branch.
-- Delete this file when the real 0009 is merged.
SELECT 1;
