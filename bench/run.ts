// `npm run bench [-- scenario…]`: benchmark scenarios. Scenarios so far:
//   parse   worker-pool threshold (inline vs piscina, by body size)
//   s1      single getSlot, closed loop: direct to a simulated node vs through jumpgate
//   badinput  malformed / oversize / bad-header requests at volume: errors and RSS
// With no argument, all of them run. Results are printed and written to bench/results/.

import { mkdirSync, writeFileSync } from 'node:fs';
import { badInputTable, runBadInput } from './bad-input.js';
import { measureThreshold, thresholdTable } from './parse-threshold.js';
import { runS1, s1Table } from './s1-getslot.js';

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const all = wanted.length === 0;
const results: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, cpus: (await import('node:os')).cpus().length };
const quick = process.argv.includes('--quick');

if (all || wanted.includes('parse')) {
  const r = await measureThreshold();
  console.log('\nWorker pool threshold (median per body)\n' + thresholdTable(r));
  results.parse = r;
}
if (all || wanted.includes('s1')) {
  const r = await runS1({ seconds: quick ? 1 : 5, rounds: quick ? 1 : 2 });
  console.log('\nS1: single getSlot, closed loop, 50 connections\n' + s1Table(r));
  results.s1 = r;
}
if (all || wanted.includes('badinput')) {
  const r = await runBadInput(quick ? 20 : 2000);
  console.log('\nBad input: documented errors, bounded memory\n' + badInputTable(r));
  results.badinput = r;
}
mkdirSync(new URL('../../bench/results/', import.meta.url), { recursive: true });
const file = new URL(`../../bench/results/${quick ? 'quick' : 'latest'}.json`, import.meta.url);
writeFileSync(file, JSON.stringify(results, (_k, v: unknown) => (v === Infinity ? null : v), 2) + '\n');
console.log(`\nresults written to ${file.pathname}`);
