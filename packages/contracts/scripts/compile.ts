// Compiles every .sol file under contracts/ with solcjs and writes the committed artifacts:
//   artifacts/<Name>.json        { contractName, abi, bytecode, deployedBytecode, immutableReferences? }
//   src/artifacts/<Name>.ts      `export const <Name>Artifact = { abi: [...] as const, bytecode: '0x…' as const, deployedBytecode: … }`
//   src/artifacts/index.ts       re-exports every artifact
// The .ts files exist so viem infers function names and argument types from the ABI literal
// (a JSON import would widen every string to `string`). One file per contract, one ABI entry per
// line, keeps every generated file reviewable (the settlement ABI alone is ~60 entries).
// Runtime code never needs solc. `deployedBytecode` is the runtime code a deployment leaves on chain
// (what `tollgate settlement status` and the start-up check compare an address's code with);
// `immutableReferences` lists the byte ranges the constructor fills in (absent when none).
//
// Usage: npm run compile -w @tollgate/contracts   (or: npx tsx packages/contracts/scripts/compile.ts)
//
// Why solcjs and not hardhat/foundry: hardhat's compiler download fails offline here, and solcjs
// (the `solc` npm package, WASM) compiles this folder in under a second with no network.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import solc from 'solc';

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CONTRACTS_DIR = join(PACKAGE_DIR, 'contracts');
const ARTIFACTS_DIR = join(PACKAGE_DIR, 'artifacts');
const GENERATED_DIR = join(PACKAGE_DIR, 'src', 'artifacts');

/** The compiler every artifact is built with; a different solc would silently change bytecode. */
const EXPECTED_SOLC = '0.8.30';

// `paris` (no PUSH0, no MCOPY) so the bytecode also deploys on chains that lag behind mainnet
// hardforks; 200 runs is solc's default trade-off between deploy and call cost.
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'paris',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object', 'evm.deployedBytecode.immutableReferences'] } },
} as const;

interface SolcError {
  severity: 'error' | 'warning' | 'info';
  formattedMessage: string;
}
interface SolcContractOutput {
  abi: unknown[];
  evm: { bytecode: { object: string }; deployedBytecode: { object: string; immutableReferences?: Record<string, ImmutableRef[]> } };
}
/** A byte range of the runtime code the constructor writes an immutable into. */
interface ImmutableRef {
  start: number;
  length: number;
}
interface Artifact {
  contractName: string;
  abi: unknown[];
  bytecode: `0x${string}`;
  deployedBytecode: `0x${string}`;
  immutableReferences?: ImmutableRef[];
}
interface SolcOutput {
  errors?: SolcError[];
  contracts?: Record<string, Record<string, SolcContractOutput>>;
}

function listSolidityFiles(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return listSolidityFiles(path);
      return path.endsWith('.sol') ? [path] : [];
    })
    .sort();
}

/** Source unit names are paths relative to contracts/, with forward slashes on every OS. */
function sourceName(path: string): string {
  return relative(CONTRACTS_DIR, path).split(sep).join('/');
}

function compile(): Artifact[] {
  const version: string = solc.version();
  if (!version.startsWith(`${EXPECTED_SOLC}+`)) {
    throw new Error(`solc ${EXPECTED_SOLC} expected, found ${version}: pin "solc": "${EXPECTED_SOLC}"`);
  }

  const files = listSolidityFiles(CONTRACTS_DIR);
  if (files.length === 0) throw new Error(`no .sol files under ${CONTRACTS_DIR}`);
  const sources = Object.fromEntries(files.map((f) => [sourceName(f), { content: readFileSync(f, 'utf8') }]));
  const input = { language: 'Solidity', sources, settings: SETTINGS };

  // Imports are resolved inside contracts/ only: the sources are self-contained by design.
  const findImports = (path: string): { contents: string } | { error: string } => {
    const full = resolve(CONTRACTS_DIR, path);
    if (!full.startsWith(CONTRACTS_DIR + sep)) return { error: `import outside contracts/: ${path}` };
    try {
      return { contents: readFileSync(full, 'utf8') };
    } catch {
      return { error: `file not found: ${path}` };
    }
  };

  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  for (const w of (output.errors ?? []).filter((e) => e.severity !== 'error')) {
    console.warn(w.formattedMessage);
  }
  if (errors.length > 0) {
    throw new Error(`solc failed with ${errors.length} error(s):\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  }

  const artifacts: Artifact[] = [];
  for (const contracts of Object.values(output.contracts ?? {})) {
    for (const [contractName, out] of Object.entries(contracts)) {
      // Interfaces and abstract contracts have no bytecode: nothing to deploy, nothing to write.
      if (!out.evm.bytecode.object) continue;
      const immutables = Object.values(out.evm.deployedBytecode.immutableReferences ?? {})
        .flat()
        .sort((a, b) => a.start - b.start);
      artifacts.push({
        contractName,
        abi: out.abi,
        bytecode: `0x${out.evm.bytecode.object}`,
        deployedBytecode: `0x${out.evm.deployedBytecode.object}`,
        ...(immutables.length > 0 ? { immutableReferences: immutables.map(({ start, length }) => ({ start, length })) } : {}),
      });
    }
  }
  const names = artifacts.map((a) => a.contractName);
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate) throw new Error(`two contracts are named ${duplicate}: artifact names must be unique`);
  return artifacts.sort((a, b) => a.contractName.localeCompare(b.contractName));
}

const GENERATED_HEADER = ['// GENERATED by scripts/compile.ts from contracts/**/*.sol (solc 0.8.30, optimizer 200 runs, evm paris).', '// Do not edit: change the Solidity source and run `npm run compile -w @tollgate/contracts`.', ''].join('\n');

function renderArtifactTs(a: Artifact): string {
  const entries = a.abi.map((entry) => `    ${JSON.stringify(entry)},`).join('\n');
  return (
    `${GENERATED_HEADER}\n` +
    `export const ${a.contractName}Artifact = {\n` +
    `  abi: [\n${entries}\n  ] as const,\n` +
    `  bytecode: '${a.bytecode}' as const,\n` +
    `  deployedBytecode: '${a.deployedBytecode}' as const,\n` +
    (a.immutableReferences ? `  immutableReferences: ${JSON.stringify(a.immutableReferences)} as const,\n` : '') +
    `};\n`
  );
}

function renderIndexTs(artifacts: Artifact[]): string {
  const lines = artifacts.map((a) => `export { ${a.contractName}Artifact } from './${a.contractName}.ts';`);
  return `${GENERATED_HEADER}\n${lines.join('\n')}\n`;
}

/** Every committed file the compiler makes, by path relative to the package: what `main` writes. */
export function renderAll(): Map<string, string> {
  const artifacts = compile();
  const files = new Map<string, string>();
  for (const a of artifacts) files.set(`artifacts/${a.contractName}.json`, JSON.stringify(a, null, 2) + '\n');
  for (const a of artifacts) files.set(`src/artifacts/${a.contractName}.ts`, renderArtifactTs(a));
  files.set('src/artifacts/index.ts', renderIndexTs(artifacts));
  return files;
}

function main(): void {
  const started = performance.now();
  const files = renderAll();
  // Stale artifacts of deleted contracts must not survive a rebuild.
  for (const dir of [ARTIFACTS_DIR, GENERATED_DIR]) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
  }
  for (const [path, text] of files) writeFileSync(join(PACKAGE_DIR, path), text);
  const ms = Math.round(performance.now() - started);
  const names = [...files.keys()].filter((p) => p.startsWith('artifacts/')).map((p) => p.slice('artifacts/'.length, -'.json'.length));
  console.log(`compiled ${names.join(', ')} in ${ms} ms → artifacts/, src/artifacts/`);
}

// Run as a script (npm run compile); imported by test/artifacts-fresh.test.ts for renderAll only.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
