// Child process of test/integration/tls.test.ts: @solana/web3.js v1 and @solana/kit over
// https:// and wss:// through the gateway. Their sockets (node-fetch, fetch, ws) take no CA
// option from outside, so this process is started with NODE_EXTRA_CA_CERTS naming the test
// CA, which node reads at start: verification stays on, for this process only.
//
// Usage: node tls-clients.js HTTPS_URL WSS_URL WEB3_WSS_URL
// Prints one JSON line: { passed, failed: [messages] }.

import { checkKitSlotNotifications, checkWeb3OnSlotChange } from './solana-clients.js';

type Test = Parameters<typeof checkWeb3OnSlotChange>[1];

/** The two assertions the client checks use, recorded instead of reported to tap. */
class Recorder {
  passed = 0;
  readonly failed: string[] = [];

  ok(value: unknown, message = 'ok'): boolean {
    if (value) this.passed++;
    else this.failed.push(message);
    return Boolean(value);
  }

  equal(found: unknown, wanted: unknown, message = 'equal'): boolean {
    return this.ok(found === wanted, `${message}: found ${String(found)}, wanted ${String(wanted)}`);
  }
}

const [httpsUrl, wssUrl, web3WssUrl] = process.argv.slice(2) as [string, string, string];
const rec = new Recorder();
const t = rec as unknown as Test;
try {
  await checkWeb3OnSlotChange(httpsUrl, t, web3WssUrl);
  await checkKitSlotNotifications(wssUrl, httpsUrl, t);
} catch (err) {
  rec.failed.push(`threw: ${(err as Error).stack ?? String(err)}`);
}
process.stdout.write(JSON.stringify({ passed: rec.passed, failed: rec.failed }) + '\n');
// web3.js and kit may leave timers behind; the answer is out.
process.exit(0);
