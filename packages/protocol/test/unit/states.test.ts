// The wire's status lists (src/states.ts): the live and terminal order statuses split the list, and
// the browser subpath is the same module the package root re-exports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as root from '../../src/index.ts';
import { isTerminalOrderStatus, LIVE_ORDER_STATUSES, ORDER_STATUSES, TERMINAL_ORDER_STATUSES } from '../../src/states.ts';

test('every order status is either live or terminal, never both', () => {
  assert.deepEqual([...LIVE_ORDER_STATUSES, ...TERMINAL_ORDER_STATUSES].sort(), [...ORDER_STATUSES].sort());
  for (const s of ORDER_STATUSES) assert.equal(isTerminalOrderStatus(s), !(LIVE_ORDER_STATUSES as readonly string[]).includes(s), s);
  assert.equal(isTerminalOrderStatus('SOMETHING_NEWER'), false, 'an unknown status (a newer server) is not terminal');
});

test('the package root re-exports the lists (one module, not a copy)', () => {
  assert.equal(root.ORDER_STATUSES, ORDER_STATUSES);
  assert.equal(root.isTerminalOrderStatus, isTerminalOrderStatus);
});
