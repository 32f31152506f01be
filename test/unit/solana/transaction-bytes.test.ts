import t from 'tap';
import { Keypair, MessageV0, PublicKey, SystemProgram, Transaction, VersionedTransaction } from '@solana/web3.js';
import { getBase58Codec } from '@solana/kit';
import { lastBlockhash, readRecentBlockhash, TxEncoding, TxRead } from '../../../src/solana/transaction-bytes.js';

const base58 = getBase58Codec();
const bs58 = { encode: (b: Uint8Array): string => base58.decode(b) };

const payer = Keypair.generate();
const to = Keypair.generate().publicKey;

function legacy(blockhash: string, instructions = 1): Uint8Array {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash });
  for (let i = 0; i < instructions; i++) tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1 + i }));
  tx.sign(payer);
  return tx.serialize();
}

function v0(blockhash: string): Uint8Array {
  const msg = MessageV0.compile({
    payerKey: payer.publicKey,
    recentBlockhash: blockhash,
    instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 5 })],
  });
  const tx = new VersionedTransaction(msg);
  tx.sign([payer]);
  return tx.serialize();
}

/** The encoded transaction as it sits inside a JSON body, and its character range. */
function inBody(text: string): { body: Buffer; start: number; end: number } {
  const body = Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["${text}"]}`);
  const start = body.indexOf('"params":["') + 11;
  return { body, start, end: start + text.length };
}

function read(bytes: Uint8Array, enc: TxEncoding): { r: TxRead; hash: string } {
  const text = enc === TxEncoding.Base64 ? Buffer.from(bytes).toString('base64') : bs58.encode(bytes);
  const { body, start, end } = inBody(text);
  const r = readRecentBlockhash(body, start, end, enc);
  return { r, hash: bs58.encode(lastBlockhash) };
}

t.test('legacy and v0 transactions, base58 and base64', async (t) => {
  for (let i = 0; i < 20; i++) {
    const hash = Keypair.generate().publicKey.toBase58();
    for (const [name, bytes] of [
      ['legacy', legacy(hash, 1 + (i % 4))],
      ['v0', v0(hash)],
    ] as const) {
      for (const enc of [TxEncoding.Base58, TxEncoding.Base64]) {
        const got = read(bytes, enc);
        t.equal(got.r, TxRead.Ok, `${name} ${enc} reads`);
        t.equal(got.hash, hash, `${name} ${enc} blockhash`);
      }
    }
  }
});

t.test('a blockhash with leading zero bytes, and a transaction with several signers', async (t) => {
  const hash = new PublicKey(new Uint8Array(32).fill(0, 0, 3).fill(7, 3)).toBase58();
  const second = Keypair.generate();
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: hash });
  tx.add(SystemProgram.transfer({ fromPubkey: second.publicKey, toPubkey: to, lamports: 1 }));
  tx.sign(payer, second);
  for (const enc of [TxEncoding.Base58, TxEncoding.Base64]) {
    const got = read(tx.serialize(), enc);
    t.equal(got.r, TxRead.Ok);
    t.equal(got.hash, hash);
  }
});

t.test('durable-nonce transactions are reported, not routed by their nonce', async (t) => {
  const nonce = Keypair.generate().publicKey;
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: Keypair.generate().publicKey.toBase58() });
  tx.add(SystemProgram.nonceAdvance({ noncePubkey: nonce, authorizedPubkey: payer.publicKey }));
  tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1 }));
  tx.sign(payer);
  for (const enc of [TxEncoding.Base58, TxEncoding.Base64]) t.equal(read(tx.serialize(), enc).r, TxRead.DurableNonce);
});

t.test('garbage is unparsable, never a throw', async (t) => {
  const cases = ['', 'a', '0OIl', '====', 'AAAA', 'x'.repeat(5000), '1'.repeat(100)];
  for (const c of cases) {
    const { body, start, end } = inBody(c);
    t.equal(readRecentBlockhash(body, start, end, TxEncoding.Base58), TxRead.Unparsable, `base58 ${c.slice(0, 10)}`);
    t.equal(readRecentBlockhash(body, start, end, TxEncoding.Base64), TxRead.Unparsable, `base64 ${c.slice(0, 10)}`);
  }
  // Truncations of a real transaction at every length.
  const full = legacy(Keypair.generate().publicKey.toBase58());
  for (let n = 0; n < 140; n++) {
    for (const enc of [TxEncoding.Base58, TxEncoding.Base64]) {
      const r = read(full.subarray(0, n), enc).r;
      t.not(r, TxRead.DurableNonce);
    }
  }
  // Random bytes.
  let x = 12345;
  for (let k = 0; k < 300; k++) {
    const len = 1 + ((k * 7) % 1300);
    const b = new Uint8Array(len);
    for (let i = 0; i < len; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      b[i] = x & 0xff;
    }
    t.doesNotThrow(() => read(b, TxEncoding.Base64));
    t.doesNotThrow(() => read(b, TxEncoding.Base58));
  }
});
