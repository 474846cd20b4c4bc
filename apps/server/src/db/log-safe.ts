// Error logging without data (issue 12): used by the HTTP error handler and the background workers.
/**
 * What may be logged of an unexpected error: its structure, never its data. A database error's
 * message, `detail`, `where` and `hint` embed the offending values (`Key (email)=(…)`, `JSON data,
 * line 1: …`), and PGlite attaches the statement's `query` and `params` (a checkout session's
 * private metadata, client reference, new ids) to the error itself; pino's default serializer
 * printed all of it. A database error (a SQLSTATE `code`) keeps its SQLSTATE, severity and schema
 * object names, and its message only for the classes whose messages carry no data; any other error
 * keeps its type, code and stack frames, with quoted spans of its message removed (V8 quotes the
 * values it reports).
 *
 * @example logSafeError(pgErr) // => { type: 'DatabaseError', sqlstate: '22P05', table: 'checkout_sessions', ... }
 */
export function logSafeError(err: unknown): Record<string, string | number> {
  const e = (err ?? {}) as Record<string, unknown>;
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code && /^[0-9A-Z]{5}$/.test(code)) {
    const out: Record<string, string | number> = { type: 'DatabaseError', sqlstate: code };
    // Classes whose messages name only schema objects and server state (connection, transaction
    // state, syntax or access rule, resources, operator intervention): useful and value-free. Data
    // exceptions (22), integrity violations (23), RAISE (P0) and the rest quote the values.
    if (/^(08|25|40|42|53|54|55|57|58)/.test(code) && typeof e.message === 'string') out.message = e.message.slice(0, 200);
    for (const k of ['severity', 'schema', 'table', 'column', 'dataType', 'constraint', 'routine', 'position']) {
      const v = e[k];
      // Object names are identifiers from our own migrations; anything longer is not one.
      if ((typeof v === 'string' || typeof v === 'number') && String(v).length <= 80) out[k] = v;
    }
    return out;
  }
  const name = typeof err !== 'object' || err === null ? typeof err : typeof e.name === 'string' && e.name ? e.name : typeof e.constructor === 'function' && e.constructor.name ? e.constructor.name : 'object';
  const out: Record<string, string | number> = { type: name.slice(0, 80) };
  if (code) out.code = code.slice(0, 80);
  if (typeof e.message === 'string') out.message = e.message.replace(/(["'`])(?:(?!\1).)*\1/g, '$1…$1').slice(0, 200);
  if (typeof e.stack === 'string')
    out.stack = e.stack
      .split('\n')
      .filter((l) => /^\s+at /.test(l))
      .slice(0, 12)
      .join('\n');
  return out;
}
