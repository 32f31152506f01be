// `npm run bench [-- scenario…]`: benchmark scenarios. Scenarios so far:
//   parse   worker-pool threshold (inline vs piscina, by body size)
//   s1      single getSlot, closed loop: direct to a simulated node vs through jumpgate
//   badinput  malformed / oversize / bad-header requests at volume: errors and RSS
//   keymap  key → node map: lookup rate, distribution error, keys moved vs minimum
//   hotkeys memory of the hot-key buckets after 1,000,000 distinct keys
//   ws      1,000 slotSubscribe clients: upstream subscriptions, RSS per connection, delay
// With no argument, all of them run. Results are printed and written to bench/results/.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { badInputTable, runBadInput } from './bad-input.js';
import { hotkeysTable, runHotkeys } from './hotkeys.js';
import { keymapTable, runKeymapBench } from './keymap.js';
import { runWsFanout, wsFanoutTable } from './ws-fanout.js';
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
if (all || wanted.includes('keymap')) {
  const r = await runKeymapBench();
  console.log('\nKey affinity map (1,000,000 keys)\n' + keymapTable(r));
  results.keymap = r;
}
if (all || wanted.includes('hotkeys')) {
  const r = runHotkeys(quick ? 100_000 : 1_000_000);
  console.log('\nHot-key buckets under random keys\n' + hotkeysTable(r));
  results.hotkeys = r;
}
if (all || wanted.includes('ws')) {
  const r = await runWsFanout(quick ? 50 : 1000, quick ? 1 : 5);
  console.log('\nWebSocket fan-out (slotSubscribe through jumpgate)\n' + wsFanoutTable(r));
  results.ws = r;
}
mkdirSync(new URL('../../bench/results/', import.meta.url), { recursive: true });
const file = new URL(`../../bench/results/${quick ? 'quick' : 'latest'}.json`, import.meta.url);
// A run of some scenarios updates only their entries.
let previous: Record<string, unknown> = {};
try {
  previous = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
} catch {
  // first run
}
writeFileSync(file, JSON.stringify({ ...previous, ...results }, (_k, v: unknown) => (v === Infinity ? null : v), 2) + '\n');
console.log(`\nresults written to ${file.pathname}`);
