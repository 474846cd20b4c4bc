// What the two watcher-at-scale benches (watcher-scale.ts on anvil, solana-scale.ts on the local
// SVM) measure around each block or slot, and how they print it: a reading of the RPC proxy, the
// CPU of the gateway and Postgres, and the database; per-sample deltas kept apart for quiet and busy
// samples; one markdown table of medians with the busy/quiet ratio.
import type pg from 'pg';
import type { RpcProxyStats } from '@tollgate/devchain';
import { cpuSnapshot, type CpuReading } from './cpu.ts';
import { median } from './load.ts';

export type Kind = 'quiet' | 'busy';

export interface Reading {
  rpc: RpcProxyStats;
  cpu: CpuReading;
  /** tuples written so far in the scratch database (as far as pg_stat has heard of them) */
  tuples: number;
  /** rows of chain_transfers: a payment adds one, an unrelated transfer must add none */
  transfers: number;
}

const count = async (c: pg.Client, sql: string) => Number((await c.query<{ n: string }>(sql)).rows[0]!.n);

/** The state the deltas are taken between: RPC proxy counters, CPU of `pid` and `dbName`'s backends, rows. */
export async function readScale(c: pg.Client, rpc: () => RpcProxyStats, pid: number, dbName: string): Promise<Reading> {
  return {
    rpc: rpc(),
    cpu: cpuSnapshot(pid, dbName),
    tuples: await count(c, 'SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::text AS n FROM pg_stat_user_tables'),
    transfers: await count(c, 'SELECT count(*)::text AS n FROM chain_transfers'),
  };
}

/** JSON-RPC calls the proxy has seen, of one method or of all. */
export const rpcCalls = (s: RpcProxyStats, method?: string) => (method ? (s.calls[method] ?? 0) : Object.values(s.calls).reduce((a, b) => a + b, 0));

/** Waits until the watcher has moved `orderId` off CHECKOUT_VERIFIED; ms since `since`. */
export async function detected(c: pg.Client, orderId: string, since: number, limitMs: number): Promise<number> {
  for (;;) {
    const { rows } = await c.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [orderId]);
    if (rows[0]!.status !== 'CHECKOUT_VERIFIED') return performance.now() - since;
    if (performance.now() - since > limitMs) throw new Error(`order ${orderId} not detected within ${limitMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Per-sample values by quiet/busy and row name, in the order rows were first pushed. */
export class QuietBusy {
  readonly rows: Record<Kind, Record<string, number[]>> = { quiet: {}, busy: {} };

  push(kind: Kind, name: string, v: number): void {
    (this.rows[kind][name] ??= []).push(v);
  }

  /** The rows both benches share, from two readings: bytes, stored rows, tuples, CPU. */
  pushCosts(kind: Kind, before: Reading, after: Reading): void {
    let pgMs = 0;
    for (const [p, ms] of after.cpu.postgresByPid) pgMs += ms - (before.cpu.postgresByPid.get(p) ?? 0);
    this.push(kind, 'bytes sent to the node', after.rpc.bytesIn - before.rpc.bytesIn);
    this.push(kind, 'bytes received from the node', after.rpc.bytesOut - before.rpc.bytesOut);
    this.push(kind, 'chain_transfers rows added', after.transfers - before.transfers);
    this.push(kind, 'tuples written (pg_stat)', after.tuples - before.tuples);
    this.push(kind, 'gateway CPU ms', after.cpu.server - before.cpu.server);
    this.push(kind, 'postgres CPU ms', pgMs);
  }

  /** The table (median (min–max) per sample, busy ÷ quiet) and the latency difference against its target. */
  print(o: { caption: string; unit: string; busyLabel: string; pollMs: number }): void {
    const fmt = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return `${median(s).toFixed(0)} (${s[0]!.toFixed(0)}–${s[s.length - 1]!.toFixed(0)})`;
    };
    console.log(`\n${o.caption}; median (min–max) per ${o.unit}\n`);
    console.log(`| per ${o.unit} | quiet chain | ${o.busyLabel} | busy / quiet |`);
    console.log('|---|---|---|---|');
    for (const name of Object.keys(this.rows.quiet)) {
      const q = median(this.rows.quiet[name]!);
      const b = median(this.rows.busy[name]!);
      console.log(`| ${name} | ${fmt(this.rows.quiet[name]!)} | ${fmt(this.rows.busy[name]!)} | ${q === 0 ? (b === 0 ? '–' : '∞') : (b / q).toFixed(2)} |`);
    }
    const dq = median(this.rows.quiet['detection latency ms']!);
    const dbz = median(this.rows.busy['detection latency ms']!);
    console.log(`\ndetection latency busy − quiet: ${(dbz - dq).toFixed(0)} ms (target ≤ poll + 100 = ${o.pollMs + 100} ms)`);
  }
}
