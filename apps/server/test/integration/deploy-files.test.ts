// deploy/ (Dockerfile, compose.yaml, systemd units, Caddyfile) cannot run on these machines (no
// Docker, no systemd as PID 1). What can be checked is checked here against the code they name:
// every path exists, every npm command is one CI runs, every environment variable is one the config
// schema knows and the values parse as Tollgate parses them, every `--role` exists, the example
// config loads, and the image's HEALTHCHECK command, run as written, passes against a live gateway
// and fails against a dead port.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../src/config/load.ts';
import { EnvSchema } from '../../src/config/schema.ts';
import { parseTrustProxy } from '../../src/config/trust-proxy.ts';
import { ROLES } from '../../src/roles.ts';
import { freePort } from '../helpers/net.ts';
import { startTestServer } from '../helpers/server.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');
const rootPkg = JSON.parse(read('package.json'));
const SCHEMA_ENV = new Set(Object.keys(EnvSchema.properties));
// Node's own variables, set by the deployment files for the runtime itself.
const NODE_ENV_NAMES = new Set(['NODE_ENV', 'NODE_OPTIONS']);
const knownEnv = (name: string) => SCHEMA_ENV.has(name) || NODE_ENV_NAMES.has(name);

// Dockerfile: instructions with their continuation lines joined, comments dropped.
const dockerfile = read('deploy/Dockerfile')
  .replace(/\\\n(\s*#[^\n]*\n)*/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
// Build stages, each from its FROM line on (the global ARG before the first FROM belongs to none).
const stages: string[][] = [];
for (const l of dockerfile) {
  if (l.startsWith('FROM ')) stages.push([l]);
  else stages.at(-1)?.push(l);
}
const runtime = stages.at(-1)!;
const instr = (lines: string[], op: string) => lines.filter((l) => l.startsWith(`${op} `)).map((l) => l.slice(op.length + 1).trim());
const envOf = (lines: string[]) => Object.fromEntries(instr(lines, 'ENV').flatMap((l) => [...l.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])));
const entrypoint = JSON.parse(instr(runtime, 'ENTRYPOINT')[0]!) as string[];
const healthcheck = instr(runtime, 'HEALTHCHECK')[0]!;

describe('deploy/Dockerfile', () => {
  it('builds in stages and runs the compiled build as a non-root user with a HEALTHCHECK', () => {
    assert.deepEqual(
      stages.map((s) => /AS (\w+)$/.exec(s[0]!)?.[1]),
      ['build', 'deps', 'runtime'],
    );
    assert.deepEqual(instr(runtime, 'USER'), ['node']);
    assert.equal(envOf(runtime).NODE_ENV, 'production');
    assert.deepEqual(entrypoint, ['node', 'apps/server/dist/tollgate.js']);
    // The same file the `tollgate` command runs with NODE_ENV=production and scripts/build.mjs writes.
    assert.match(read('apps/server/bin/tollgate.js'), /new URL\('\.\.\/dist\/tollgate\.js', import\.meta\.url\)/);
    assert.match(read('scripts/build.mjs'), /default: join\(SERVER, 'dist'\)/);
    assert.match(read('scripts/build.mjs'), /join\(fresh, 'tollgate\.js'\)/);
    assert.deepEqual(JSON.parse(instr(runtime, 'CMD')[0]!).slice(0, 2), ['serve', '--role']);
    assert.ok((ROLES as readonly string[]).includes(JSON.parse(instr(runtime, 'CMD')[0]!)[2]));
    assert.match(healthcheck, /^--interval=\S+\s+--timeout=\S+\s+--start-period=\S+\s+--retries=\d+\s+CMD\s/);
  });

  it('copies only paths that exist, and every workspace manifest the lockfile needs', () => {
    const copies = stages.flatMap((s) => instr(s, 'COPY')).filter((c) => !c.startsWith('--from'));
    for (const c of copies) {
      const parts = c.split(/\s+/).filter((p) => !p.startsWith('--'));
      for (const src of parts.slice(0, -1)) if (src !== '.') assert.ok(existsSync(join(ROOT, src)), `COPY ${src}: no such path`);
    }
    const manifests = copies.map((c) => c.split(/\s+/)[0]!).filter((p) => p.endsWith('/package.json'));
    assert.deepEqual(manifests.map((p) => p.replace(/\/package\.json$/, '')).sort(), [...rootPkg.workspaces].sort());
    for (const c of stages.flatMap((s) => instr(s, 'COPY')).filter((c) => c.startsWith('--from=build'))) {
      const src = c.split(/\s+/)[1]!.replace(/^\/src\//, '');
      // dist/ is what the build stage's `npm run build` makes; everything else is in the repository.
      if (src !== 'apps/server/dist') assert.ok(existsSync(join(ROOT, src)), `COPY --from=build ${src}: no such path`);
    }
  });

  it('builds with the commands CI runs, and installs the server workspace for production', () => {
    const ci = read('.ci/run');
    const runs = stages
      .flatMap((s) => instr(s, 'RUN'))
      .flatMap((r) => r.split('&&').map((x) => x.trim()))
      .filter((r) => r.startsWith('npm '));
    assert.ok(runs.length >= 3, runs.join('\n'));
    for (const r of runs) {
      const script = /^npm run (\S+)/.exec(r)?.[1];
      if (script) assert.ok(rootPkg.scripts[script], `npm run ${script}: no such script`);
      if (r.startsWith('npm ci --omit=dev')) {
        const ws = /--workspace (\S+)/.exec(r)![1]!;
        assert.equal(JSON.parse(read('apps/server/package.json')).name, ws);
        continue;
      }
      assert.ok(
        ci.split('\n').some((l) => l.trim() === r),
        `${r}: not a command of .ci/run`,
      );
    }
  });

  it('sets only variables Tollgate or Node reads, with values they accept', () => {
    const env = envOf(runtime);
    for (const k of Object.keys(env)) assert.ok(knownEnv(k), `${k} is not in config/schema.ts EnvSchema`);
    const r = spawnSync(process.execPath, ['-e', '0'], { env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: env.NODE_OPTIONS! }, encoding: 'utf8' });
    assert.equal(r.status, 0, `NODE_OPTIONS=${env.NODE_OPTIONS}: ${r.stderr}`);
    const cfg = loadConfig({ ...env, MASTER_KEY: 'ab'.repeat(32), ADMIN_TOKEN: 'x'.repeat(24), TOLLGATE_CONFIG: join(ROOT, 'deploy/tollgate.example.json') });
    assert.equal(cfg.host, '0.0.0.0');
  });

  it('HEALTHCHECK, run as written, passes against a live gateway and fails against a dead port', async () => {
    const argv = JSON.parse(healthcheck.replace(/^.*?\sCMD\s+/, '')) as string[];
    assert.equal(argv[0], 'node');
    const s = await startTestServer({ backend: 'pglite', role: 'api' });
    try {
      // Asynchronously: the gateway answering the check runs in this process.
      const check = (port: string) =>
        new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, argv.slice(1), { env: { PATH: process.env.PATH ?? '', PORT: port }, stdio: 'ignore' });
          child.once('exit', resolve);
        });
      assert.equal(await check(new URL(s.url).port), 0);
      assert.equal(await check(String(await freePort())), 1);
    } finally {
      await s.close();
    }
  });
});

describe('deploy/compose.yaml', () => {
  const compose = parseYaml(read('deploy/compose.yaml'), { merge: true }) as any;
  const svc = compose.services;
  // ${VAR:?message} and ${VAR:-default} as an operator would fill them in.
  const fill = (v: string) => String(v).replace(/\$\{(\w+)(?::[?-][^}]*)?\}/g, (_m, name: string) => ({ POSTGRES_PASSWORD: 'pw', MASTER_KEY: 'cd'.repeat(32), ADMIN_TOKEN: 'y'.repeat(24), TOLLGATE_DOMAIN: 'pay.example.com' })[name] ?? '');

  it('runs PostgreSQL, one api and one worker from the Dockerfile, with roles that exist', () => {
    assert.ok(svc.postgres && svc.api && svc.worker);
    for (const [name, role] of [
      ['api', 'api'],
      ['worker', 'worker'],
    ] as const) {
      assert.deepEqual(svc[name].command, ['serve', '--role', role]);
      assert.ok((ROLES as readonly string[]).includes(role));
      assert.ok(existsSync(join(ROOT, 'deploy', svc[name].build.context, svc[name].build.dockerfile)));
      assert.equal(svc[name].read_only, true);
      assert.equal(svc[name].depends_on.postgres.condition, 'service_healthy');
    }
    assert.equal(svc.worker.healthcheck.disable, true, 'the worker has no HTTP server for the image HEALTHCHECK');
    assert.equal(svc.api.ports, undefined, 'only the proxy publishes a port');
  });

  it('gives Tollgate only variables it reads, a configuration that loads, and TRUST_PROXY = the proxy', () => {
    for (const name of ['api', 'worker']) {
      const env = Object.fromEntries(Object.entries(svc[name].environment as Record<string, string>).map(([k, v]) => [k, fill(v)]));
      for (const k of Object.keys(env)) assert.ok(knownEnv(k), `${name}: ${k} is not in config/schema.ts EnvSchema`);
      assert.equal(new URL(env.DATABASE_URL!).hostname, 'postgres', 'DATABASE_URL names the postgres service');
      const mounted = (svc[name].volumes as string[]).find((v) => v.endsWith(`:${env.TOLLGATE_CONFIG}:ro`))!;
      assert.ok(existsSync(join(ROOT, 'deploy', 'tollgate.example.json')), 'the example the comment says to copy');
      assert.equal(mounted.split(':')[0], './tollgate.json');
      const cfg = loadConfig({ ...env, TOLLGATE_CONFIG: join(ROOT, 'deploy/tollgate.example.json') });
      assert.equal(cfg.publicBaseUrl, 'https://pay.example.com');
      assert.equal(cfg.environment, 'production');
    }
    const proxyIp = svc.caddy.networks.tollgate.ipv4_address as string;
    assert.deepEqual(parseTrustProxy(svc.api.environment.TRUST_PROXY, 'TRUST_PROXY'), [proxyIp]);
    const [net, bits] = (compose.networks.tollgate.ipam.config[0].subnet as string).split('/');
    assert.equal(bits, '24');
    assert.equal(proxyIp.split('.').slice(0, 3).join('.'), net!.split('.').slice(0, 3).join('.'), 'the proxy address is in the network');
    assert.equal(svc.caddy.environment.TOLLGATE_UPSTREAM, `api:${svc.api.environment.PORT}`);
    assert.ok(existsSync(join(ROOT, 'deploy', (svc.caddy.volumes as string[])[0]!.split(':')[0]!)));
  });
});

describe('deploy/systemd and deploy/Caddyfile', () => {
  const unit = (name: string) => {
    const lines = read(`deploy/systemd/${name}`)
      .split('\n')
      .filter((l) => l && !l.startsWith('#') && !l.startsWith('['));
    const kv = lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const);
    const env = Object.fromEntries(kv.filter(([k]) => k === 'Environment').map(([, v]) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]));
    return { get: (k: string) => kv.find(([x]) => x === k)?.[1], env };
  };
  const caddy = read('deploy/Caddyfile');

  it('both units run the compiled entry point with a role that exists, as an unprivileged user', () => {
    for (const [file, role] of [
      ['tollgate-api.service', 'api'],
      ['tollgate-worker.service', 'worker'],
    ] as const) {
      const u = unit(file);
      assert.equal(u.get('ExecStart'), `/usr/bin/node ${u.get('WorkingDirectory')}/${entrypoint[1]} serve --role ${role}`);
      assert.ok((ROLES as readonly string[]).includes(role));
      assert.equal(u.get('User'), 'tollgate');
      assert.equal(u.get('NoNewPrivileges'), 'yes');
      assert.equal(u.get('ProtectSystem'), 'strict');
      assert.equal(u.env.NODE_ENV, 'production');
      for (const k of Object.keys(u.env)) assert.ok(knownEnv(k), `${file}: ${k} is not in config/schema.ts EnvSchema`);
    }
    const example = read('deploy/systemd/tollgate.env.example')
      .split('\n')
      .filter((l) => /^\w+=/.test(l))
      .map((l) => l.slice(0, l.indexOf('=')));
    for (const k of example) assert.ok(SCHEMA_ENV.has(k), `tollgate.env.example: ${k} is not in EnvSchema`);
  });

  it('the api listens where the Caddyfile proxies by default, trusting only that proxy', () => {
    const api = unit('tollgate-api.service').env;
    assert.deepEqual(parseTrustProxy(api.TRUST_PROXY, 'TRUST_PROXY'), ['127.0.0.1']);
    const upstream = /reverse_proxy \{\$TOLLGATE_UPSTREAM:([^}]+)\}/.exec(caddy)?.[1];
    assert.equal(upstream, `${api.HOST}:${api.PORT}`);
    // A site address that is a domain name: Caddy obtains and renews its certificate (TLS).
    assert.match(caddy, /^\{\$TOLLGATE_DOMAIN\} \{$/m);
    assert.match(caddy, /@private path \/admin\/v1 \/admin\/v1\/\* \/metrics\n\s*respond @private 404/);
  });
});
