/** CLI output: JSON with `--json`, else an indented `key: value` tree. */
export function print(v: unknown, json: boolean): void {
  if (json) return void console.log(JSON.stringify(v, null, 2));
  const walk = (obj: unknown, indent: string) => {
    for (const [k, val] of Object.entries(obj as Record<string, unknown>)) {
      if (val && typeof val === 'object') {
        console.log(`${indent}${k}:`);
        walk(val, indent + '  ');
      } else console.log(`${indent}${k}: ${val}`);
    }
  };
  walk(v, '');
}
