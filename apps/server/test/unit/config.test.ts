import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { assertConfigError, buildFile, MASTER_KEY, tempDir, USDC, USDT, withFile } from './config-fixtures.ts';

describe('loadConfig: defaults (dev profile)', () => {
  it('fills every default from an empty environment', () => {
    const cwd = tempDir();
    const c = loadConfig({}, cwd);
    assert.equal(c.profile, 'dev');
    assert.equal(c.environment, 'test');
    assert.equal(c.port, 8402);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.dataDir, join(cwd, '.tollgate'));
    assert.equal(c.publicBaseUrl, 'http://127.0.0.1:8402');
    assert.equal(c.logLevel, 'info');
    assert.equal(c.orderTtlSeconds, 600);
    assert.equal(c.fees.perOrderMicros, 10_000n);
    assert.deepEqual(c.chains, []);
    assert.equal(c.masterKey.length, 32);
    assert.match(c.adminToken ?? '', /^tgadm_[0-9a-f]{48}$/);
  });

  it('ignores unknown and empty variables', () => {
    const cwd = tempDir();
    const c = loadConfig({ PATH: '/usr/bin', PORT: '', LOG_LEVEL: '', SOMETHING_ELSE: 'x' }, cwd);
    assert.equal(c.port, 8402);
    assert.equal(c.logLevel, 'info');
  });

  it('takes PORT, HOST, LOG_LEVEL, DATA_DIR, ADMIN_TOKEN, PUBLIC_BASE_URL from the environment', () => {
    const cwd = tempDir();
    const c = loadConfig(
      {
        PORT: '9000',
        HOST: '0.0.0.0',
        LOG_LEVEL: 'debug',
        DATA_DIR: 'state',
        ADMIN_TOKEN: 'a-long-enough-admin-token',
        PUBLIC_BASE_URL: 'https://pay.example.com///',
        MASTER_KEY,
      },
      cwd,
    );
    assert.equal(c.port, 9000);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.logLevel, 'debug');
    assert.equal(c.dataDir, join(cwd, 'state'));
    assert.equal(c.adminToken, 'a-long-enough-admin-token');
    assert.equal(c.publicBaseUrl, 'https://pay.example.com', 'trailing slashes are trimmed');
    assert.deepEqual(c.masterKey, Buffer.from(MASTER_KEY, 'hex'));
  });

  it('derives the public base URL from an IPv6 host in brackets', () => {
    const c = loadConfig({ HOST: '::1', PORT: '8500' }, tempDir());
    assert.equal(c.publicBaseUrl, 'http://[::1]:8500');
  });
});

describe('loadConfig: dev profile secrets', () => {
  it('generates master.key and admin.token in DATA_DIR with mode 0600', () => {
    const cwd = tempDir();
    const c = loadConfig({}, cwd);
    for (const name of ['master.key', 'admin.token']) {
      const p = join(cwd, '.tollgate', name);
      assert.equal(statSync(p).mode & 0o777, 0o600, `${name} must be 0600`);
    }
    assert.equal(readFileSync(join(cwd, '.tollgate', 'master.key'), 'utf8').trim(), c.masterKey.toString('hex'));
    assert.equal(readFileSync(join(cwd, '.tollgate', 'admin.token'), 'utf8').trim(), c.adminToken);
  });

  it('reuses the generated secrets on the next start', () => {
    const cwd = tempDir();
    const first = loadConfig({}, cwd);
    const second = loadConfig({}, cwd);
    assert.deepEqual(second.masterKey, first.masterKey);
    assert.equal(second.adminToken, first.adminToken);
  });

  it('tightens a pre-existing secret file to 0600', () => {
    const cwd = tempDir();
    loadConfig({}, cwd);
    const p = join(cwd, '.tollgate', 'admin.token');
    chmodSync(p, 0o644);
    loadConfig({}, cwd);
    assert.equal(statSync(p).mode & 0o777, 0o600);
  });

  it('does not write secret files when both are given', () => {
    const cwd = tempDir();
    loadConfig({ MASTER_KEY, ADMIN_TOKEN: 'a-long-enough-admin-token' }, cwd);
    assert.throws(() => statSync(join(cwd, '.tollgate', 'master.key')), { code: 'ENOENT' });
    assert.throws(() => statSync(join(cwd, '.tollgate', 'admin.token')), { code: 'ENOENT' });
  });

  it('refuses a corrupted master.key instead of using a short key', () => {
    const cwd = tempDir();
    loadConfig({}, cwd);
    writeFileSync(join(cwd, '.tollgate', 'master.key'), 'not-hex\n');
    assertConfigError(() => loadConfig({}, cwd), 'MASTER_KEY', /master\.key/);
  });
});

describe('loadConfig: invalid environment values name the variable', () => {
  const cases: [string, string][] = [
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['PORT', '65536'],
    ['PORT', '123456'],
    ['PORT', '80.5'],
    ['LOG_LEVEL', 'verbose'],
    ['LOG_LEVEL', 'INFO'],
    ['MASTER_KEY', 'ab'.repeat(31)],
    ['MASTER_KEY', 'zz'.repeat(32)],
    ['MASTER_KEY', 'ab'.repeat(33)],
    ['DATABASE_URL', 'mysql://root@localhost/db'],
    ['DATABASE_URL', 'localhost:5432'],
    ['ADMIN_TOKEN', 'short'],
    ['PUBLIC_BASE_URL', 'ftp://example.com'],
  ];
  for (const [key, value] of cases) {
    it(`${key}=${value}`, () => {
      assertConfigError(() => loadConfig({ MASTER_KEY, [key]: value }, tempDir()), key);
    });
  }

  it('accepts the boundary ports 0 and 65535', () => {
    assert.equal(loadConfig({ PORT: '0' }, tempDir()).port, 0);
    assert.equal(loadConfig({ PORT: '65535' }, tempDir()).port, 65535);
  });

  it('accepts postgres:// and postgresql:// URLs with a MASTER_KEY', () => {
    for (const url of ['postgres://u@h/db', 'postgresql://u:p@h:5433/db']) {
      assert.equal(loadConfig({ DATABASE_URL: url, MASTER_KEY }, tempDir()).databaseUrl, url);
    }
  });
});

describe('loadConfig: MASTER_KEY is required outside the embedded dev profile', () => {
  it('with TOLLGATE_CONFIG', () => {
    const { cwd, env } = withFile(buildFile());
    delete env.MASTER_KEY;
    assertConfigError(() => loadConfig(env, cwd), 'MASTER_KEY', /required/);
    assert.throws(() => statSync(join(cwd, '.tollgate', 'master.key')), { code: 'ENOENT' }, 'no key file is invented');
  });

  it('with DATABASE_URL', () => {
    const cwd = tempDir();
    assertConfigError(() => loadConfig({ DATABASE_URL: 'postgres://u@h/db' }, cwd), 'MASTER_KEY', /required/);
    assert.throws(() => statSync(join(cwd, '.tollgate', 'master.key')), { code: 'ENOENT' });
  });
});

describe('loadConfig: the config file', () => {
  it('parses a valid file (file profile, tokens lowercased)', () => {
    const { cwd, env } = withFile(
      buildFile({
        environment: 'production',
        public_base_url: 'https://pay.example.com/',
        order_ttl_seconds: 900,
        fees: { per_order: '0.25' },
      }),
    );
    const c = loadConfig(env, cwd);
    assert.equal(c.profile, 'file');
    assert.equal(c.environment, 'production');
    assert.equal(c.publicBaseUrl, 'https://pay.example.com');
    assert.equal(c.orderTtlSeconds, 900);
    assert.equal(c.fees.perOrderMicros, 250_000n);
    assert.equal(c.adminToken, undefined, 'no admin token is invented outside the dev profile');
    assert.deepEqual(c.chains, [
      {
        chainId: 31337,
        name: 'Local',
        rpcUrl: 'http://127.0.0.1:8545',
        confirmations: 1,
        finalityConfirmations: 2,
        pollIntervalMs: 200,
        tokens: [{ symbol: 'USDC', address: USDC.toLowerCase(), decimals: 6 }],
      },
    ]);
  });

  it('PUBLIC_BASE_URL in the environment wins over the file', () => {
    const { cwd, env } = withFile(buildFile(), { PUBLIC_BASE_URL: 'https://env.example.com' });
    assert.equal(loadConfig(env, cwd).publicBaseUrl, 'https://env.example.com');
  });

  it('a missing file names TOLLGATE_CONFIG', () => {
    const cwd = tempDir();
    assertConfigError(() => loadConfig({ TOLLGATE_CONFIG: 'nope.json', MASTER_KEY }, cwd), 'TOLLGATE_CONFIG', /nope\.json/);
  });

  it('bad JSON names TOLLGATE_CONFIG', () => {
    const { cwd, env } = withFile('{ "environment": "test", ');
    assertConfigError(() => loadConfig(env, cwd), 'TOLLGATE_CONFIG');
  });

  it('a JSON document that is not an object names TOLLGATE_CONFIG', () => {
    for (const doc of ['[]', 'null', '"test"']) {
      const { cwd, env } = withFile(doc);
      assertConfigError(() => loadConfig(env, cwd), 'TOLLGATE_CONFIG');
    }
  });

  const schemaCases: [string, Record<string, unknown>, string][] = [
    ['unknown top-level key', buildFile({ extra: true }), 'extra'],
    [
      'missing environment',
      (() => {
        const f = buildFile();
        delete f.environment;
        return f;
      })(),
      'environment',
    ],
    ['bad environment', buildFile({ environment: 'staging' }), 'environment'],
    ['order_ttl_seconds too small', buildFile({ order_ttl_seconds: 10 }), 'order_ttl_seconds'],
    ['unknown key in fees', buildFile({ fees: { per_order: '0.01', currency: 'USD' } }), 'fees.currency'],
    ['fees.per_order not a decimal string', buildFile({ fees: { per_order: '1e-2' } }), 'fees.per_order'],
    ['fees.per_order as a JSON number', buildFile({ fees: { per_order: 0.01 } }), 'fees.per_order'],
    ['fees.per_order with 7 fraction digits', buildFile({ fees: { per_order: '0.0000001' } }), 'fees.per_order'],
    ['unknown key in a chain', buildFile({ chains: [{ ...(buildFile().chains as object[])[0], rpc: 'x' }] }), 'chains.0.rpc'],
    ['bad chain rpc_url', buildFile({ chains: [{ ...(buildFile().chains as object[])[0], rpc_url: 'localhost:8545' }] }), 'chains.0.rpc_url'],
    ['chain without tokens', buildFile({ chains: [{ ...(buildFile().chains as object[])[0], tokens: [] }] }), 'chains.0.tokens'],
    ['bad token address', buildFile({ chains: [{ ...(buildFile().chains as object[])[0], tokens: [{ symbol: 'USDC', address: '0x1234', decimals: 6 }] }] }), 'chains.0.tokens.0.address'],
    ['bad token symbol', buildFile({ chains: [{ ...(buildFile().chains as object[])[0], tokens: [{ symbol: 'usdc', address: USDC, decimals: 6 }] }] }), 'chains.0.tokens.0.symbol'],
    ['unknown key in a token', buildFile({ chains: [{ ...(buildFile().chains as object[])[0], tokens: [{ symbol: 'USDC', address: USDC, decimals: 6, name: 'x' }] }] }), 'chains.0.tokens.0.name'],
    ['finality below confirmations', buildFile({ chains: [{ ...(buildFile().chains as object[])[0], confirmations: 5, finality_confirmations: 4 }] }), 'chains.0.finality_confirmations'],
    ['duplicate chain', buildFile({ chains: [(buildFile().chains as object[])[0], { ...(buildFile().chains as object[])[0], name: 'Again' }] }), 'chains.1.chain_id'],
    [
      'duplicate token symbol',
      buildFile({
        chains: [
          {
            ...(buildFile().chains as object[])[0],
            tokens: [
              { symbol: 'USDC', address: USDC, decimals: 6 },
              { symbol: 'USDC', address: USDT, decimals: 6 },
            ],
          },
        ],
      }),
      'chains.0.tokens.1.symbol',
    ],
  ];
  for (const [name, doc, key] of schemaCases) {
    it(`${name} → ${key}`, () => {
      const { cwd, env } = withFile(doc);
      assertConfigError(() => loadConfig(env, cwd), key);
    });
  }

  it('resolves TOLLGATE_CONFIG relative to cwd', () => {
    const { cwd, env } = withFile(buildFile());
    assert.equal(loadConfig(env, cwd).chains.length, 1);
    assert.equal(loadConfig({ ...env, TOLLGATE_CONFIG: join(cwd, 'tollgate.json') }, tempDir()).chains.length, 1);
  });
});
