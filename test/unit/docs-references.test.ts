// Every citation of a heading names one that exists: `README "X"`, `docs/x.md "X"` and
// `bench/README.md "X"` (several in a row: `docs/routing.md "A", "B" and "C"`) in code comments,
// tests, benchmarks and the docs, and every markdown link to `file.md#anchor` in README.md,
// docs/ and bench/README.md. A citation may give a heading's first words: "Batches" names
// "Batches (S4)", "Setup" names "Setup: what runs where" (the text must end where the heading
// goes on with " (", ":" or ",").

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

/** The repository root: this file runs from dist/test/unit/. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TREES = ['src', 'test', 'bench', 'scripts', 'offload-tasks', 'deploy', 'docs'];
const SKIP = new Set(['node_modules', 'dist', 'results']);
const TEXT = /\.(ts|js|mjs|md|sh|cfg|conf|yml|yaml|service|json)$/;

function filesUnder(dir: string): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs).flatMap((name) => {
    if (SKIP.has(name)) return [];
    const rel = join(dir, name);
    return statSync(join(ROOT, rel)).isDirectory() ? filesUnder(rel) : TEXT.test(name) ? [rel] : [];
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}

const headingCache = new Map<string, string[]>();
/** The headings of a markdown file (outside code fences), or null when it does not exist. */
function headings(file: string): string[] | null {
  const abs = join(ROOT, file);
  if (!existsSync(abs)) return null;
  let list = headingCache.get(file);
  if (list === undefined) {
    list = [];
    let fence = false;
    for (const line of readFileSync(abs, 'utf8').split('\n')) {
      if (line.startsWith('```')) fence = !fence;
      const m = fence ? null : /^#{1,6} (.+?)\s*$/.exec(line);
      if (m) list.push(m[1]!);
    }
    headingCache.set(file, list);
  }
  return list;
}

/** True when `cited` is a heading of `file`, or its first words (see the header). */
export function names(cited: string, heads: string[]): boolean {
  return heads.some((h) => h === cited || (h.startsWith(cited) && /^( \(|:|,)/.test(h.slice(cited.length))));
}

/** Comment line breaks and markdown line wraps joined, so a citation split over lines reads as one. */
function flatten(text: string, markdown: boolean): string {
  return markdown ? text.replace(/\n(?!\n)/g, ' ') : text.replace(/\n\s*(?:\/\/|\*|#)\s*/g, ' ');
}

const CITATION = /(?<![\w/.-])(README(?:\.md)?|docs\/[\w.-]+\.md|bench\/README\.md),?\s+("[^"\n]+"(?:(?:,\s+|,?\s+and\s+)"[^"\n]+")*)/g;
const LINK = /\]\(([^()\s#]*\.md)?#([^()\s]+)\)/g;

interface Problem {
  where: string;
  what: string;
}

function check(): { problems: Problem[]; citations: number; links: number } {
  const problems: Problem[] = [];
  let citations = 0;
  let links = 0;
  // This file's own header shows the forms with made-up headings.
  const files = ['README.md', ...TREES.flatMap(filesUnder)].filter((f) => f !== 'test/unit/docs-references.test.ts');
  for (const file of files) {
    const markdown = file.endsWith('.md');
    const text = flatten(readFileSync(join(ROOT, file), 'utf8'), markdown);
    for (const m of text.matchAll(CITATION)) {
      const target = m[1] === 'README' ? 'README.md' : m[1]!;
      const heads = headings(target);
      for (const q of m[2]!.matchAll(/"([^"]+)"/g)) {
        citations++;
        if (heads === null) problems.push({ where: file, what: `${target} does not exist (cited for "${q[1]}")` });
        else if (!names(q[1]!, heads)) problems.push({ where: file, what: `${target} has no heading "${q[1]}"` });
      }
    }
    if (!markdown) continue;
    for (const m of text.matchAll(LINK)) {
      links++;
      const target = m[1] === undefined || m[1] === '' ? file : normalize(join(dirname(file), m[1]));
      const heads = headings(target);
      if (heads === null) problems.push({ where: file, what: `link to ${target}#${m[2]}: no such file` });
      else if (!heads.some((h) => slug(h) === m[2])) problems.push({ where: file, what: `link to ${relative('.', target)}#${m[2]}: no such heading` });
    }
  }
  return { problems, citations, links };
}

t.test("anchors are GitHub slugs, and a citation may give a heading's first words", async (t) => {
  t.equal(slug('Shared limits across instances (Redis)'), 'shared-limits-across-instances-redis');
  t.equal(slug('The load generator: `jumpgate bench`'), 'the-load-generator-jumpgate-bench');
  t.equal(slug('Side by side: S1–S7, the floor and isolation'), 'side-by-side-s1s7-the-floor-and-isolation');
  t.ok(names('Batches', ['Batches (S4)']));
  t.ok(names('Setup', ['Setup: what runs where']));
  t.notOk(names('Batch', ['Batches (S4)']), 'a word cut short is not a heading');
  t.notOk(names('Shared limits', ['Shared limits across instances (Redis)']));
});

t.test('every cited heading and every linked anchor exists', async (t) => {
  const { problems, citations, links } = check();
  t.ok(citations > 100, `${citations} citations read`);
  t.ok(links > 20, `${links} links read`);
  t.same(problems, [], problems.map((p) => `${p.where}: ${p.what}`).join('\n'));
});
