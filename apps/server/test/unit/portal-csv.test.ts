import assert from 'node:assert/strict';
import { test } from 'node:test';
import { csvCell, csvLine, EXPORT_COLUMNS, orderCsvLine } from '../../src/portal/data/csv.ts';
import { hashPassword, verifyPassword } from '../../src/portal/passwords.ts';
import { decodeCursor, encodeCursor } from '../../src/portal/data/service.ts';

test('csvCell: quotes what needs quoting, defuses spreadsheet formulas', () => {
  assert.equal(csvCell('plain'), 'plain');
  assert.equal(csvCell('a,b'), '"a,b"');
  assert.equal(csvCell('say "hi"'), '"say ""hi"""');
  assert.equal(csvCell('two\nlines'), '"two\nlines"');
  assert.equal(csvCell('=HYPERLINK("x")'), `"'=HYPERLINK(""x"")"`);
  for (const lead of ['+', '-', '@', '\t']) assert.equal(csvCell(`${lead}1`)[0] === "'" || csvCell(`${lead}1`).startsWith(`"'`), true, lead);
  assert.equal(csvCell(-5), '-5', 'numbers are data, not formulas');
  assert.equal(csvCell(null), '');
  assert.equal(csvLine(['a', 1, null]), 'a,1,\r\n');
});

/** Splits a line as a spreadsheet set to `sep` does: a field is quoted only when it starts with `"`. */
function splitAs(line: string, sep: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let j = i + 1;
      let v = '';
      while (j < line.length) {
        if (line[j] === '"' && line[j + 1] === '"') {
          v += '"';
          j += 2;
          continue;
        }
        if (line[j] === '"') break;
        v += line[j++];
      }
      out.push(v);
      i = line.indexOf(sep, j);
      if (i < 0) break;
      i++;
    } else {
      const j = line.indexOf(sep, i);
      out.push(line.slice(i, j < 0 ? undefined : j));
      if (j < 0) break;
      i = j + 1;
    }
  }
  return out;
}

test('csvCell: a formula after a semicolon, tab or line break is defused too (spreadsheets with ; as separator)', () => {
  assert.equal(csvCell('Mug;=HYPERLINK(1)'), "Mug;'=HYPERLINK(1)");
  assert.equal(csvCell('Mug; +1'), "Mug; '+1");
  assert.equal(csvCell('a;b'), 'a;b', 'data without a formula character is kept as is');
  const hostile = ['x;=cmd|"/c calc"!A0', 'a,@SUM(1)', 'q\n-2+3', 'p\t=1', 'ok;;  =2', '=lead'];
  const line = csvLine(['id', ...hostile, 'end']).replace(/\r\n$/, '');
  for (const sep of [',', ';', '\t']) {
    for (const rawField of splitAs(line, sep)) {
      for (const field of rawField.split(/[\r\n]/)) {
        assert.doesNotMatch(field.trimStart(), /^[=+\-@]/, `separator ${JSON.stringify(sep)}: ${JSON.stringify(field)}`);
      }
    }
  }
});

test('orderCsvLine: token units with the token decimals, fee in fee units, line items, one cell per column', () => {
  const line = orderCsvLine({
    id: 'ord_1',
    dapp_order_id: 'shop,42',
    flow: 'DIRECT',
    chain_id: 31337,
    token_symbol: 'USDC',
    decimals: 6,
    from_address: '0xaa',
    pay_to_address: '0xbb',
    amount_wei: '1234567',
    paid_amount_wei: '1234567',
    fee_amount: '10000',
    status: 'INVOICED',
    tx_hash: '0xcc',
    created_at: new Date('2026-01-02T03:04:05.678Z'),
    invoiced_at: new Date('2026-01-02T03:05:00Z'),
    created_us: '0',
    log_index: 3,
    block_number: 99,
    confirmed_at: null,
    checkout_id: 'cs_1',
    client_reference_id: 'ref-1',
    line_items: [
      { name: 'Latte', quantity: 2, amount: '0.617283' },
      { name: 'Bag', quantity: 1 },
    ],
  });
  assert.ok(line.endsWith('\r\n'));
  const cells = line
    .trimEnd()
    .match(/("([^"]|"")*"|[^,]*)(,|$)/g)!
    .map((c) => c.replace(/,$/, ''));
  const row = Object.fromEntries(EXPORT_COLUMNS.map((c, i) => [c, cells[i]]));
  assert.equal(row.dapp_order_id, '"shop,42"');
  assert.equal(row.amount, '1.234567');
  assert.equal(row.amount_wei, '1234567');
  assert.equal(row.fee, '0.01');
  assert.equal(row.block_number, '99');
  assert.equal(row.line_items, 'Latte x 2 @ 0.617283; Bag x 1');
});

test('keyset cursor: round trip, and anything else is refused', () => {
  const c = encodeCursor({ created_us: '1764000000123456', id: 'ord_AbC9' });
  assert.deepEqual(decodeCursor(c), { createdUs: '1764000000123456', id: 'ord_AbC9' });
  assert.equal(decodeCursor(Buffer.from("1.x' OR 1=1").toString('base64url')), undefined);
  assert.equal(decodeCursor('!!!'), undefined);
});

test('scrypt passwords: verify, refuse a wrong one, refuse malformed hashes', async () => {
  const h = await hashPassword('correct horse battery');
  assert.match(h, /^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  assert.equal(await verifyPassword('correct horse battery', h), true);
  assert.equal(await verifyPassword('correct horse batterY', h), false);
  assert.notEqual(await hashPassword('correct horse battery'), h, 'salted');
  assert.equal(await verifyPassword('x', 'bcrypt$whatever'), false);
  assert.equal(await verifyPassword('x', 'scrypt$40$8$1$AAAA$AAAA'), false, 'absurd cost refused, not run');
});
