import { logSafeError } from './db/log-safe.ts';
import { processLog } from './log.ts';

export interface WorkerDef {
  name: string;
  intervalMs: number;
  run(): Promise<void>;
}

export interface Worker {
  name: string;
  stop(): Promise<void>;
}

/**
 * Runs periodic background loops. A loop never overlaps itself and never crashes the process: an
 * error (database outage, RPC failure) is logged and the next tick tries again. Durable work lives
 * in tables; these loops only poll them.
 */
export function startWorkers(defs: WorkerDef[], log: (msg: string, err: unknown) => void = defaultLog): Worker[] {
  return defs.map((def) => {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> | undefined;
    const tick = async () => {
      if (stopped) return;
      running = def.run().catch((err) => log(`worker ${def.name} failed; retrying next tick`, err));
      await running;
      running = undefined;
      if (!stopped) timer = setTimeout(tick, def.intervalMs);
    };
    timer = setTimeout(tick, 0);
    return {
      name: def.name,
      async stop() {
        stopped = true;
        clearTimeout(timer);
        await running;
      },
    };
  });
}

function defaultLog(msg: string, err: unknown) {
  // Structure only: a database error's message and detail can carry the row's values.
  processLog.error({ err: logSafeError(err) }, msg);
}
