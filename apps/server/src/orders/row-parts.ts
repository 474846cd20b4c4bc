import { OptionalKind, type TSchema } from '@sinclair/typebox';
import type { OrderRow } from './repo.ts';

/**
 * The port through which a module built on orders (a rail, DELEGATE settlement) owns columns of the
 * `orders` row and shows them on the order status record, so that orders/ names none of them. The
 * composition root registers the parts (`registerOrderRowParts`, orders/views.ts) when main.ts loads,
 * before any app is built: the status record schema, the record itself and the columns a transition
 * may set are assembled from the core's and the parts'.
 */
export interface OrderRowPart {
  /** Who owns the part (start-up errors name it). */
  name: string;
  /**
   * The columns of `orders` the part's modules set through `transitionOrder` / `patchOrder`. Fixed
   * names, added to the allow-list of updatable columns at start-up: they are interpolated into SQL.
   */
  columns: readonly string[];
  /**
   * The part's status record properties, each optional (absent from the orders the part does not
   * concern), placed in the schema right after the property `after` names (the core's or one placed
   * before it). The schema's order is the order of an HTTP response's fields (fast-json-stringify).
   */
  properties: readonly PartProperty[];
  /**
   * The core record field after which the part's fields go in the record object, and so in webhook
   * payloads (stored as `json`, which keeps the text: their order is the object's, not the schema's).
   */
  fieldsAfter: string;
  /** The part's fields of an order, in payload order, read from its row (`SELECT *`); `{}` for an order it does not concern. */
  fields(row: OrderRow): Record<string, unknown>;
  /**
   * The least fraction digits the record shows the order's amounts with (`refunded_amount`): a
   * currency whose amounts keep their minor units gives its decimals; undefined when the part does
   * not concern the order. No part answering: the shortest form.
   */
  shownFractionDigits?(row: OrderRow): number | undefined;
}

interface PartProperty {
  key: string;
  /** The property this one follows in the schema. */
  after: string;
  schema: TSchema;
}

/** The record as the core builds it: its schema properties, its fields of an order, and their object order. */
export interface CoreRecord<A extends unknown[], R extends object> {
  properties: Readonly<Record<string, TSchema>>;
  /** Every key `record` may return, in the order it returns them. */
  fieldOrder: readonly string[];
  record(row: OrderRow, fractionDigits: number, ...args: A): R;
}

/** The assembled record: the core's fields, typed, and the parts' (typed by the parts' own modules). */
export interface StatusRecordAssembly<A extends unknown[], R extends object> {
  properties: Record<string, TSchema>;
  record(row: OrderRow, ...args: A): Assembled<R>;
}

type Assembled<R> = R & { [partField: string]: unknown };

function isEmpty(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

/**
 * The status record of the core plus the parts. Throws (at start-up) when a part claims a key the
 * core or another part has, places a property after an unknown key, declares a required property
 * or puts its fields after a field the core does not have.
 */
export function assembleStatusRecord<A extends unknown[], R extends object>(core: CoreRecord<A, R>, parts: readonly OrderRowPart[]): StatusRecordAssembly<A, R> {
  const owner = new Map<string, string>(Object.keys(core.properties).map((k) => [k, 'the core']));
  const keys = Object.keys(core.properties);
  const schemas = new Map<string, TSchema>(Object.entries(core.properties));
  const slots = new Map<string, OrderRowPart[]>();
  for (const part of parts) {
    for (const p of part.properties) {
      const claimed = owner.get(p.key);
      if (claimed) throw new Error(`order row part ${part.name}: status record property ${p.key} is already defined by ${claimed}`);
      if (p.schema[OptionalKind] !== 'Optional') throw new Error(`order row part ${part.name}: status record property ${p.key} must be optional (absent for the orders the part does not concern)`);
      const at = keys.indexOf(p.after);
      if (at < 0) throw new Error(`order row part ${part.name}: ${p.key} follows ${p.after}, which the status record does not have (yet)`);
      keys.splice(at + 1, 0, p.key);
      owner.set(p.key, part.name);
      schemas.set(p.key, p.schema);
    }
    if (!core.fieldOrder.includes(part.fieldsAfter)) throw new Error(`order row part ${part.name}: its fields follow ${part.fieldsAfter}, which the core record does not have`);
    slots.set(part.fieldsAfter, [...(slots.get(part.fieldsAfter) ?? []), part]);
  }
  const properties: Record<string, TSchema> = {};
  for (const k of keys) properties[k] = schemas.get(k)!;
  const digits = parts.filter((p) => p.shownFractionDigits);
  const fractionDigits = (row: OrderRow) => {
    for (const p of digits) {
      const d = p.shownFractionDigits!(row);
      if (d !== undefined) return d;
    }
    return 0;
  };
  if (parts.length === 0) return { properties, record: (row, ...args) => core.record(row, 0, ...args) as Assembled<R> };
  return {
    properties,
    record(row, ...args) {
      const base = core.record(row, fractionDigits(row), ...args) as Record<string, unknown>;
      const fields = new Map<OrderRowPart, Record<string, unknown>>();
      for (const p of parts) {
        const f = p.fields(row);
        if (!isEmpty(f)) fields.set(p, f);
      }
      // Most orders belong to no part's rail: the core's record as it is (the hot path of a status read).
      if (fields.size === 0) return base as Assembled<R>;
      const out: Record<string, unknown> = {};
      for (const k of core.fieldOrder) {
        if (base[k] !== undefined) out[k] = base[k];
        const after = slots.get(k);
        if (after) for (const p of after) Object.assign(out, fields.get(p));
      }
      return out as Assembled<R>;
    },
  };
}
