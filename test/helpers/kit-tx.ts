// @solana/kit transactions for tests of the simulated cluster: a system transfer or account
// creation signed by generated keys, as a bot builds them.

import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';

export const SYSTEM_PROGRAM = address('11111111111111111111111111111111');

export function transferIx(from: KeyPairSigner, to: Address, lamports: bigint): Instruction {
  const data = new Uint8Array(12);
  const v = new DataView(data.buffer);
  v.setUint32(0, 2, true);
  v.setBigUint64(4, lamports, true);
  return {
    programAddress: SYSTEM_PROGRAM,
    accounts: [{ address: from.address, role: AccountRole.WRITABLE_SIGNER, signer: from } as never, { address: to, role: AccountRole.WRITABLE }],
    data,
  };
}

/** SystemInstruction::CreateAccount: `space` zero bytes owned by `owner`. */
export function createAccountIx(from: KeyPairSigner, account: KeyPairSigner, lamports: bigint, space: bigint, ownerBytes: Uint8Array): Instruction {
  const data = new Uint8Array(52);
  const v = new DataView(data.buffer);
  v.setUint32(0, 0, true);
  v.setBigUint64(4, lamports, true);
  v.setBigUint64(12, space, true);
  data.set(ownerBytes, 20);
  return {
    programAddress: SYSTEM_PROGRAM,
    accounts: [
      { address: from.address, role: AccountRole.WRITABLE_SIGNER, signer: from } as never,
      { address: account.address, role: AccountRole.WRITABLE_SIGNER, signer: account } as never,
    ],
    data,
  };
}

export interface SignedTx {
  signature: string;
  /** Base64 wire bytes. */
  wire: string;
}

/** Signs `instructions` paid by `payer` over `blockhash` (version 0 or legacy). */
export async function signTx(
  payer: KeyPairSigner,
  instructions: Instruction[],
  blockhash: string,
  lastValidBlockHeight: bigint,
  version: 0 | 'legacy' = 0,
): Promise<SignedTx> {
  const msg = pipe(
    createTransactionMessage({ version }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as Blockhash, lastValidBlockHeight }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const signed = await signTransactionMessageWithSigners(msg);
  return { signature: getSignatureFromTransaction(signed), wire: getBase64EncodedWireTransaction(signed) };
}
