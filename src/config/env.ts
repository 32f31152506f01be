// `${NAME}` / `${NAME:-default}` substitution over a parsed config tree's string values.
// `$${` is a literal `${`. As in sh, `:-` also applies when the variable is set but empty.
//
// Substitution runs on the parsed tree, never on raw text, so a value can't change the YAML's
// structure. But a bare `${X}` inside a flow mapping (`{ token: ${X} }`, as in docs/configuration.md "Configuration") is
// not valid YAML: `{` and `}` are flow indicators. So before parsing, `protectRefs` swaps every
// character of each `${…}` after the `$` for a private-use code point (same length, so YAML's
// line/column numbers stay exact; printable, so it is a plain scalar anywhere), and
// `expandEnv` swaps them back in string values and keys before substituting.

export type Path = (string | number)[];

const PUA = 0xe000;
const RAW_REF = /\$\{[^}\n]*\}/g;
const PROTECTED_REF = /\$\uE07B[^\uE07D\n]*\uE07D/g;
const REF = /\$\$\{|\$\{([^}]*)\}/g;
const INNER = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;

const shift = (s: string, by: number, test: (c: number) => boolean): string => {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out += test(c) ? String.fromCharCode(c + by) : s[i];
  }
  return out;
};

/** Make every `${…}` in raw YAML text a plain-scalar-safe run of the same length. */
export function protectRefs(text: string): string {
  return text.replace(RAW_REF, (m) => '$' + shift(m.slice(1), PUA, (c) => c < 0x80));
}

function unprotect(s: string): string {
  if (s.indexOf('$\uE07B') === -1) return s;
  return s.replace(PROTECTED_REF, (m) => '$' + shift(m.slice(1), -PUA, (c) => c >= PUA && c < PUA + 0x80));
}

export interface Expanded {
  value: unknown;
  /** `JSON.stringify(path)` of each string that had a reference substituted → variable names. */
  fromEnv: Map<string, string[]>;
  problems: { path: Path; message: string }[];
}

export const pathKey = (path: Path): string => JSON.stringify(path);

export function expandEnv(tree: unknown, env: NodeJS.ProcessEnv): Expanded {
  const out: Expanded = { value: undefined, fromEnv: new Map(), problems: [] };

  const str = (s: string, path: Path): string => {
    s = unprotect(s);
    if (s.indexOf('${') === -1) return s;
    const names: string[] = [];
    const result = s.replace(REF, (m, inner: string | undefined) => {
      if (inner === undefined) return '${'; // `$${` escape
      const ref = INNER.exec(inner);
      if (ref === null) {
        out.problems.push({ path, message: `malformed environment reference "${m}" (expected \${NAME} or \${NAME:-default})` });
        return m;
      }
      const name = ref[1] as string;
      const dflt = ref[2];
      const v = env[name];
      names.push(name);
      if (v !== undefined && (v !== '' || dflt === undefined)) return v;
      if (dflt !== undefined) return dflt;
      out.problems.push({
        path,
        message: `environment variable ${name} is not set (referenced as \${${name}}; set it, or write \${${name}:-default})`,
      });
      return m;
    });
    if (names.length > 0) out.fromEnv.set(pathKey(path), names);
    return result;
  };

  const walk = (v: unknown, path: Path): unknown => {
    if (typeof v === 'string') return str(v, path);
    if (Array.isArray(v)) return v.map((item, i) => walk(item, [...path, i]));
    if (v !== null && typeof v === 'object') {
      const o: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) {
        const key = unprotect(k);
        Object.defineProperty(o, key, { value: walk(item, [...path, key]), enumerable: true, writable: true, configurable: true });
      }
      return o;
    }
    return v;
  };

  out.value = walk(tree, []);
  return out;
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** An env-substituted string, as the number or boolean the schema wants; undefined if it isn't one. */
export function coerce(s: string, want: string): number | boolean | undefined {
  const t = s.trim();
  if (want === 'boolean') {
    const l = t.toLowerCase();
    return l === 'true' ? true : l === 'false' ? false : undefined;
  }
  if ((want === 'number' || want === 'int') && NUMBER.test(t)) return Number(t);
  return undefined;
}
