-- Placeholder: migration 0006 belongs to another branch. Dropped when the branches merge.
SELECT 1;
