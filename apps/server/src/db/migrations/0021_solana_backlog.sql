-- The Solana watcher reads a followed address's backlog across ticks, oldest first, never skipping
-- a signature (chain/solana/scan.ts catchUp): `backlog` holds the `before` boundaries of the pages
-- walked down towards `signature` but not processed yet, newest first (empty when caught up);
-- `backlog_end` the boundary popped last (the page ending at it is complete). `signature` becomes
-- nullable: an address first followed with a long history has a walk in progress before any of
-- its signatures is processed.
ALTER TABLE solana_cursors ALTER COLUMN signature DROP NOT NULL;
ALTER TABLE solana_cursors ADD COLUMN backlog text[] NOT NULL DEFAULT '{}';
ALTER TABLE solana_cursors ADD COLUMN backlog_end text;
