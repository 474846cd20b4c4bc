// Module hook of the `tollgate` command (registered by register.mjs): drops the source-map comment
// of third-party modules (node_modules) as they load. tsx turns source maps on for the whole
// process so that stack traces point into our TypeScript; Node 20 then parses and keeps the map of
// every module that names one, which for our dependencies is ~8 MB of JSON (their TypeScript
// sources included) held for the life of the gateway. Their stack frames show the published
// JavaScript instead, as they do in a process without source maps, and as Node 22's
// `module.setSourceMapsSupport` does by default (`nodeModules: false`).
const MAP_COMMENT = /\n\/\/[#@] sourceMappingURL=[^\n]*\s*$/;

export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context);
  // CommonJS modules come back without source here (Node's CommonJS loader reads them): untouched.
  if (loaded.format !== 'module' || loaded.source == null || !url.includes('/node_modules/')) return loaded;
  const source = typeof loaded.source === 'string' ? loaded.source : new TextDecoder().decode(loaded.source);
  return MAP_COMMENT.test(source) ? { ...loaded, source: source.replace(MAP_COMMENT, '\n') } : loaded;
}
