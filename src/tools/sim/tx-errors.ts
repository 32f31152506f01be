// Transaction errors as Agave writes them: the JSON of its serde derive (`"BlockhashNotFound"`,
// {"InstructionError":[0,{"Custom":1}]}) and the Display text of a preflight failure. The
// runtime hands errors over as enum numbers; the name tables follow its declaration order.

const TX_ERRORS = [
  'AccountInUse',
  'AccountLoadedTwice',
  'AccountNotFound',
  'ProgramAccountNotFound',
  'InsufficientFundsForFee',
  'InvalidAccountForFee',
  'AlreadyProcessed',
  'BlockhashNotFound',
  'CallChainTooDeep',
  'MissingSignatureForFee',
  'InvalidAccountIndex',
  'SignatureFailure',
  'InvalidProgramForExecution',
  'SanitizeFailure',
  'ClusterMaintenance',
  'AccountBorrowOutstanding',
  'WouldExceedMaxBlockCostLimit',
  'UnsupportedVersion',
  'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit',
  'WouldExceedAccountDataBlockLimit',
  'TooManyAccountLocks',
  'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner',
  'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex',
  'InvalidRentPayingAccount',
  'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit',
  'MaxLoadedAccountsDataSizeExceeded',
  'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit',
  'UnbalancedTransaction',
  'ProgramCacheHitMaxLimit',
  'CommitCancelled',
];

const IX_ERRORS = [
  'GenericError',
  'InvalidArgument',
  'InvalidInstructionData',
  'InvalidAccountData',
  'AccountDataTooSmall',
  'InsufficientFunds',
  'IncorrectProgramId',
  'MissingRequiredSignature',
  'AccountAlreadyInitialized',
  'UninitializedAccount',
  'UnbalancedInstruction',
  'ModifiedProgramId',
  'ExternalAccountLamportSpend',
  'ExternalAccountDataModified',
  'ReadonlyLamportChange',
  'ReadonlyDataModified',
  'DuplicateAccountIndex',
  'ExecutableModified',
  'RentEpochModified',
  'NotEnoughAccountKeys',
  'AccountDataSizeChanged',
  'AccountNotExecutable',
  'AccountBorrowFailed',
  'AccountBorrowOutstanding',
  'DuplicateAccountOutOfSync',
  'InvalidError',
  'ExecutableDataModified',
  'ExecutableLamportChange',
  'ExecutableAccountNotRentExempt',
  'UnsupportedProgramId',
  'CallDepth',
  'MissingAccount',
  'ReentrancyNotAllowed',
  'MaxSeedLengthExceeded',
  'InvalidSeeds',
  'InvalidRealloc',
  'ComputationalBudgetExceeded',
  'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure',
  'ProgramFailedToComplete',
  'ProgramFailedToCompile',
  'Immutable',
  'IncorrectAuthority',
  'AccountNotRentExempt',
  'InvalidAccountOwner',
  'ArithmeticOverflow',
  'UnsupportedSysvar',
  'IllegalOwner',
  'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded',
  'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits',
  'BorshIoError',
];

const TX_TEXT: Record<string, string> = {
  AccountInUse: 'Account in use',
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  AlreadyProcessed: 'This transaction has already been processed',
  BlockhashNotFound: 'Blockhash not found',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  InvalidAccountForFee: 'This account may not be used to pay transaction fees',
  ProgramAccountNotFound: 'Attempt to load a program that does not exist',
  SignatureFailure: 'Transaction did not pass signature verification',
  SanitizeFailure: 'Transaction failed to sanitize accounts offsets correctly',
};

/** An error of the runtime, as JSON text and as Agave's Display text. */
export interface TxError {
  json: string;
  text: string;
  /** Fieldless errors stop a transaction before it pays its fee: it never lands. */
  landed: boolean;
}

export function fieldlessError(name: string): TxError {
  return { json: JSON.stringify(name), text: TX_TEXT[name] ?? name, landed: false };
}

interface RuntimeError {
  index?: number;
  accountIndex?: number;
  err?: () => unknown;
}

function instructionError(e: unknown): { json: string; text: string } {
  if (typeof e === 'number') {
    const name = IX_ERRORS[e] ?? 'GenericError';
    return { json: JSON.stringify(name), text: name };
  }
  const o = e as { code?: number; msg?: string };
  if (typeof o.code === 'number') return { json: '{"Custom":' + o.code + '}', text: 'custom program error: 0x' + o.code.toString(16) };
  return { json: '{"BorshIoError":' + JSON.stringify(o.msg ?? '') + '}', text: 'Failed to serialize or deserialize account data: ' + (o.msg ?? '') };
}

/** Converts the runtime's error value (an enum number or an error object). */
export function runtimeError(e: unknown): TxError {
  if (typeof e === 'number') return fieldlessError(TX_ERRORS[e] ?? 'SanitizeFailure');
  const o = e as RuntimeError;
  const kind = (e as object).constructor.name;
  if (kind === 'TransactionErrorInstructionError' && o.err !== undefined) {
    const ix = instructionError(o.err());
    return { json: '{"InstructionError":[' + o.index + ',' + ix.json + ']}', text: 'Error processing Instruction ' + o.index + ': ' + ix.text, landed: true };
  }
  if (kind === 'TransactionErrorInsufficientFundsForRent') {
    return {
      json: '{"InsufficientFundsForRent":{"account_index":' + o.accountIndex + '}}',
      text: 'Transaction results in an account (' + o.accountIndex + ') with insufficient funds for rent',
      landed: true,
    };
  }
  if (kind === 'TransactionErrorDuplicateInstruction') {
    return {
      json: '{"DuplicateInstruction":' + o.index + '}',
      text: 'Transaction contains a duplicate instruction (' + o.index + ') that is not allowed',
      landed: false,
    };
  }
  return {
    json: '{"ProgramExecutionTemporarilyRestricted":{"account_index":' + o.accountIndex + '}}',
    text: 'Execution of the program referenced by account at index ' + o.accountIndex + ' is temporarily restricted.',
    landed: false,
  };
}
