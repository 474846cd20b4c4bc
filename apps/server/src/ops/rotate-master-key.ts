import type { Database, Queryable } from '../db/database.ts';
import { decryptSecret, encryptSecret } from '../merchants/secrets.ts';
import { receiptKeyAad } from '../mpp/receipts.ts';
import { totpAad } from '../portal/mfa.ts';

/**
 * Every column that holds AES-256-GCM ciphertext under MASTER_KEY (merchants/secrets.ts), with the
 * AAD its owner binds it to. A new encrypted column must be added here: test/integration/
 * rotate-master-key.test.ts compares this list with every `*_ciphertext` column of the schema.
 * (Quick-pay manifests are signed with the receipt keys; portal passwords, tokens and recovery codes are
 * hashes, not ciphertext; Stripe's secrets live in the environment, not the database.)
 */
export interface EncryptedTable {
  table: string;
  /** the row's primary key (its value is the AAD's input) */
  key: string;
  columns: readonly string[];
  aad: (key: string) => string;
}

export const ENCRYPTED_COLUMNS: readonly EncryptedTable[] = [
  { table: 'api_keys', key: 'api_key', columns: ['secret_ciphertext'], aad: (k) => k },
  { table: 'webhook_endpoints', key: 'id', columns: ['secret_ciphertext', 'previous_secret_ciphertext'], aad: (k) => k },
  { table: 'mpp_receipt_keys', key: 'kid', columns: ['private_ciphertext'], aad: receiptKeyAad },
  { table: 'portal_users', key: 'id', columns: ['totp_secret_ciphertext', 'totp_pending_ciphertext'], aad: totpAad },
];

/** A refusal: nothing was changed. */
export class RotationError extends Error {}

export interface RotationResult {
  /** rows re-encrypted per column (NULLs, e.g. a webhook endpoint without a previous secret, are not counted) */
  columns: { table: string; column: string; rows: number }[];
}

/**
 * Re-encrypts every secret at rest from `oldKey` to `newKey` in one transaction: either every
 * ciphertext is under the new key or (on any error) none is. The tables are locked first, so a
 * writer that should not be running waits instead of adding a row under the old key, and every
 * value is decrypted again with the new key before the commit. A value the old key does not open
 * (a wrong MASTER_KEY) refuses the whole rotation.
 *
 * What is derived from MASTER_KEY rather than encrypted under it changes with it: machine-payment
 * challenge ids and MACs (challenges issued before the rotation stop verifying), operator portal
 * sessions (they end) and the TEST card processor's notification key (docs/operations.md).
 */
export async function rotateMasterKey(db: Database, oldKey: Buffer, newKey: Buffer): Promise<RotationResult> {
  if (oldKey.length !== 32 || newKey.length !== 32) throw new RotationError('both keys must be 32 bytes (64 hex characters)');
  if (oldKey.equals(newKey)) throw new RotationError('the new key is the current MASTER_KEY');
  return db.transaction(async (tx) => {
    for (const t of ENCRYPTED_COLUMNS) await tx.exec(`LOCK TABLE ${t.table} IN EXCLUSIVE MODE`);
    if (db.kind === 'postgres') {
      const others = await otherTollgateSessions(tx);
      if (others > 0) throw new RotationError(`${others} other Tollgate connection(s) to this database: stop every api and worker process first (they hold the current key in memory). Nothing was changed.`);
    }
    const columns: RotationResult['columns'] = [];
    for (const t of ENCRYPTED_COLUMNS) {
      const counts = await reencryptTable(tx, t, oldKey, newKey);
      t.columns.forEach((c, i) => columns.push({ table: t.table, column: c, rows: counts[i]! }));
    }
    for (const t of ENCRYPTED_COLUMNS) await verifyTable(tx, t, newKey);
    return { columns };
  });
}

type Row = Record<string, string | null>;

async function reencryptTable(tx: Queryable, t: EncryptedTable, oldKey: Buffer, newKey: Buffer): Promise<number[]> {
  const { rows } = await tx.query<Row>(`SELECT ${t.key} AS k, ${t.columns.join(', ')} FROM ${t.table} ORDER BY ${t.key}`);
  const counts = t.columns.map(() => 0);
  for (const [n, row] of rows.entries()) {
    const key = row.k!;
    const values = t.columns.map((c, i) => {
      const stored = row[c];
      if (stored === null || stored === undefined) return null;
      let plain: string;
      try {
        plain = decryptSecret(oldKey, stored, t.aad(key));
      } catch {
        // The row's key is not printed: an api key or endpoint id is an identifier, but a listing of
        // them does not belong in an operator's terminal scrollback. The position finds the row.
        throw new RotationError(`${t.table}.${c} (row ${n + 1} of ${rows.length} by ${t.key}) does not decrypt with the current MASTER_KEY: is it the key this database was written with? Nothing was changed.`);
      }
      counts[i]!++;
      return encryptSecret(newKey, plain, t.aad(key));
    });
    const sets = t.columns.map((c, i) => `${c} = $${i + 2}`).join(', ');
    await tx.query(`UPDATE ${t.table} SET ${sets} WHERE ${t.key} = $1`, [key, ...values]);
  }
  return counts;
}

async function verifyTable(tx: Queryable, t: EncryptedTable, newKey: Buffer): Promise<void> {
  const { rows } = await tx.query<Row>(`SELECT ${t.key} AS k, ${t.columns.join(', ')} FROM ${t.table}`);
  for (const row of rows) {
    for (const c of t.columns) {
      const stored = row[c];
      if (stored !== null && stored !== undefined) decryptSecret(newKey, stored, t.aad(row.k!));
    }
  }
}

/**
 * Other Tollgate sessions on the same PostgreSQL database (by application_name, db/postgres.ts).
 * A running gateway keeps the old key in memory and would write ciphertext the new key cannot
 * open, so the rotation runs with every api and worker process stopped. The embedded database
 * needs no such check: its lockfile already refuses while a gateway holds it.
 */
async function otherTollgateSessions(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'tollgate' AND pid <> pg_backend_pid()`,
  );
  return rows[0]?.n ?? 0;
}
