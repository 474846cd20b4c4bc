// Loads a lazily built part of the page (page-assets.ts, PageSpec.chunks) by name: a script served
// beside app.js, allowed by the page's CSP (script-src 'self'), which registers what it exports as
// `window.tollgate_<name>`. Code only a final screen needs stays out of the first download.
declare const TOLLGATE_CHUNKS: Record<string, string>;

// Read while app.js runs (currentScript is null later): chunk URLs are relative to it.
const base = (document.currentScript as HTMLScriptElement | null)?.src ?? location.href;

/** @example const r = await loadChunk<typeof import('./receipt.ts')>('receipt'); */
export function loadChunk<T>(name: string): Promise<T> {
  const w = window as unknown as Record<string, T>;
  const key = `tollgate_${name}`;
  return w[key]
    ? Promise.resolve(w[key])
    : new Promise((resolve, reject) => {
        const s = document.createElement('script');
        s.src = new URL(TOLLGATE_CHUNKS[name]!, base).href;
        s.onload = () => (w[key] ? resolve(w[key]) : reject(new Error(name)));
        s.onerror = reject;
        document.head.append(s);
      });
}
