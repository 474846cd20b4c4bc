import { Type } from '@sinclair/typebox';
import type { ErrorWire } from '../../http/errors.ts';

/**
 * Errors in GOAT's machine-payment wire: GOAT's payer client takes the machine code from `error`
 * and a human explanation from `detail` (else it reports `http_<status>`). `code`, `param` and
 * `request_id` stay as on every other Tollgate route, so a client of either reads its field.
 */
export const goatErrorWire: ErrorWire = {
  schema: Type.Object(
    {
      error: Type.String({ description: 'the machine-readable code (GOAT wire); the same as `code`' }),
      code: Type.String(),
      detail: Type.String({ description: 'what went wrong, for humans' }),
      param: Type.Optional(Type.String()),
      request_id: Type.String(),
    },
    { description: "Error body of GOAT's machine-payment wire: `error` is the code from the closed catalog (see info.description)" },
  ),
  body: (e) => ({ error: e.code, code: e.code, detail: e.error, ...(e.param !== undefined ? { param: e.param } : {}), request_id: e.request_id }),
};
