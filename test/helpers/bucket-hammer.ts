// A worker thread for shared-bucket-table-threads.test.ts: attaches to a SharedBucketTable and
// takes one token at a time, as fast as it can, until the deadline it is sent; reports per key
// how many takes were allowed and when it took first and last, and anything impossible seen.

import { parentPort, workerData } from 'node:worker_threads';
import { SharedBucketTable } from '../../src/limits/shared-bucket-table.js';

export interface HammerJob {
  buffer: SharedArrayBuffer;
  rate: number;
  burst: number;
  /** Hammered in turn; a key may appear several times. */
  keys: string[];
  /** Also take for a new key every turn, so slots are replaced while the others are hammered. */
  churn: string;
}

export interface KeyTally {
  key: string;
  allowed: number;
  takes: number;
  /** performance.timeOrigin + performance.now() of the first and last take. */
  first: number;
  last: number;
}

export interface HammerReport {
  tallies: KeyTally[];
  churned: number;
  /** The first impossible answer or level seen, or null. */
  bad: string | null;
}

const job = workerData as HammerJob;
const table = SharedBucketTable.attach(job.buffer, job.rate, job.burst);
const maxWait = Math.ceil(1000 / job.rate);

function hammer(until: number): HammerReport {
  const origin = performance.timeOrigin;
  const tallies = new Map<string, KeyTally>();
  for (const key of job.keys) tallies.set(key, { key, allowed: 0, takes: 0, first: 0, last: 0 });
  let bad: string | null = null;
  let churned = 0;
  for (let i = 0; ; i++) {
    const key = job.keys[i % job.keys.length]!;
    const now = performance.now();
    if (now >= until) break;
    const wait = table.take(key, 1, now);
    const tally = tallies.get(key)!;
    if (tally.takes++ === 0) tally.first = origin + now;
    tally.last = origin + now;
    if (wait === 0) tally.allowed++;
    else if (bad === null && !(Number.isInteger(wait) && wait >= 1 && wait <= maxWait)) bad = `take(${key}) waited ${wait}`;
    if ((i & 15) === 0) {
      const level = table.level(key, performance.now());
      if (bad === null && !(level >= 0 && level <= job.burst)) bad = `level(${key}) = ${level}`;
      table.take(job.churn + churned++, 1, performance.now());
    }
  }
  return { tallies: [...tallies.values()], churned, bad };
}

parentPort!.once('message', (endAt: number) => parentPort!.postMessage(hammer(endAt - performance.timeOrigin)));
parentPort!.postMessage('ready');
