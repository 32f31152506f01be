// `jumpgate transfer`: sends a real SOL transfer through any Solana RPC URL (the demo's gateway
// by default) with @solana/kit, and shows the signature walk processed → confirmed →
// finalized and both balances move (docs/simulator.md "The demo transfer").

import {
  AccountRole,
  address,
  appendTransactionMessageInstruction,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { readKeypairFile, WALLET_FILE } from '../tools/demo/wallet.js';
import { parseFlags, UsageError } from './usage-error.js';

export const TRANSFER_HELP = `usage: jumpgate transfer --url RPC_URL [--to ADDRESS] [--lamports N] [--key FILE] [--wait processed|confirmed|finalized]

Sends N lamports (default 1000000, above the rent-exempt minimum of a new account) from the key
in FILE (a Solana CLI keypair file; default ./data/${WALLET_FILE}, the demo's funded key) to
ADDRESS (default: a new address), then prints the signature's status until --wait (default
finalized) and both balances before and after.`;

interface Options {
  url: string;
  to: string | null;
  lamports: bigint;
  key: string;
  wait: 'processed' | 'confirmed' | 'finalized';
}

const LEVELS = ['processed', 'confirmed', 'finalized'] as const;
const TIMEOUT_MS = 60_000;

export function parseTransferArgs(argv: string[]): Options | null {
  const { values } = parseFlags(argv, {
    url: { type: 'string' },
    to: { type: 'string' },
    lamports: { type: 'string' },
    key: { type: 'string' },
    wait: { type: 'string' },
    help: { type: 'boolean' },
  });
  if (values.help === true) return null;
  if (typeof values.url !== 'string' || !/^https?:\/\//.test(values.url)) throw new UsageError('--url must be an http(s) RPC URL');
  const lamports = (values.lamports as string | undefined) ?? '1000000';
  if (!/^\d{1,19}$/.test(lamports)) throw new UsageError(`--lamports must be a whole number, got "${lamports}"`);
  const wait = (values.wait as string | undefined) ?? 'finalized';
  if (!(LEVELS as readonly string[]).includes(wait)) throw new UsageError('--wait must be processed, confirmed or finalized');
  return {
    url: values.url,
    to: (values.to as string | undefined) ?? null,
    lamports: BigInt(lamports),
    key: (values.key as string | undefined) ?? `./data/${WALLET_FILE}`,
    wait: wait as Options['wait'],
  };
}

function transferInstruction(from: KeyPairSigner, to: Address, lamports: bigint): Instruction {
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, 2, true); // SystemInstruction::Transfer
  view.setBigUint64(4, lamports, true);
  return {
    programAddress: address('11111111111111111111111111111111'),
    accounts: [
      { address: from.address, role: AccountRole.WRITABLE_SIGNER },
      { address: to, role: AccountRole.WRITABLE },
    ],
    data,
  };
}

const sol = (l: bigint): string => `${(Number(l) / 1e9).toFixed(9)} SOL`;

export async function runTransferCli(argv: string[]): Promise<number> {
  const opts = parseTransferArgs(argv);
  if (opts === null) {
    process.stdout.write(TRANSFER_HELP + '\n');
    return 0;
  }
  const bytes = readKeypairFile(opts.key);
  if (bytes === null) throw new UsageError(`no keypair in ${opts.key} (the demo writes one under its --data directory; or pass --key FILE)`);
  const from = await createKeyPairSignerFromBytes(bytes);
  const to = opts.to === null ? (await generateKeyPairSigner()).address : address(opts.to);
  const rpc = createSolanaRpc(opts.url);
  const balances = async (): Promise<string> => {
    const [a, b] = await Promise.all([
      rpc.getBalance(from.address, { commitment: 'confirmed' }).send(),
      rpc.getBalance(to, { commitment: 'confirmed' }).send(),
    ]);
    return `from ${from.address}: ${sol(a.value)}\n  to   ${to}: ${sol(b.value)}`;
  };
  process.stdout.write(`before (confirmed):\n  ${await balances()}\n`);
  // A finalized blockhash is known to every node behind a load balancer, lagging ones too.
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'finalized' }).send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(from, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) => appendTransactionMessageInstruction(transferInstruction(from, to, opts.lamports), m),
  );
  const signed = await signTransactionMessageWithSigners(message);
  const signature = getSignatureFromTransaction(signed);
  await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64', preflightCommitment: 'processed' }).send();
  process.stdout.write(`sent ${sol(opts.lamports)}: signature ${signature}\n`);
  const started = Date.now();
  let shown = '';
  for (;;) {
    const status = (await rpc.getSignatureStatuses([signature]).send()).value[0];
    const level = status?.confirmationStatus ?? '';
    if (level !== shown && level !== '') {
      shown = level;
      process.stdout.write(
        `  ${level} at slot ${status!.slot}${status!.err === null ? '' : ` with error ${JSON.stringify(status!.err)}`} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
      );
    }
    if (LEVELS.indexOf(level as Options['wait']) >= LEVELS.indexOf(opts.wait)) break;
    if (Date.now() - started > TIMEOUT_MS) {
      process.stdout.write(`not ${opts.wait} after ${TIMEOUT_MS / 1000} s (dropped, or its blockhash expired)\n`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  process.stdout.write(`after (confirmed):\n  ${await balances()}\n`);
  return 0;
}
