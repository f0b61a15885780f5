/**
 * SPL Token and Token-2022 account layouts, unpacked with the same acceptance rules as the programs'
 * `Pack::unpack` and `StateWithExtensions::unpack` (agave's parser builds on those, so anything
 * they reject must fall back to base64 here too).
 */

export const TOKEN_ACCOUNT_LENGTH = 165;
export const MINT_LENGTH = 82;
export const MULTISIG_LENGTH = 355;
/** Offset of the account state byte in a token account. */
const STATE_OFFSET = 108;
/** Token-2022's `AccountType` byte follows the 165-byte base for both mints (zero-padded) and accounts. */
const ACCOUNT_TYPE_MINT = 1;
const ACCOUNT_TYPE_ACCOUNT = 2;

/** A `COption<Pubkey>` or `COption<u64>` failed to decode (tag neither 0 nor 1). */
const INVALID = Symbol("invalid");

export interface TokenAccountState {
  readonly mint: Uint8Array;
  readonly owner: Uint8Array;
  readonly amount: bigint;
  readonly delegate: Uint8Array | null;
  /** 1 initialized, 2 frozen (uninitialized accounts do not unpack). */
  readonly state: 1 | 2;
  readonly isNative: bigint | null;
  readonly delegatedAmount: bigint;
  readonly closeAuthority: Uint8Array | null;
}

export interface MintState {
  readonly mintAuthority: Uint8Array | null;
  readonly supply: bigint;
  readonly decimals: number;
  readonly freezeAuthority: Uint8Array | null;
}

export interface MultisigState {
  readonly m: number;
  readonly n: number;
  readonly signers: readonly Uint8Array[];
}

/** One Token-2022 extension as found in the TLV area. */
export interface TlvEntry {
  readonly type: number;
  readonly value: Uint8Array;
}

/** A base state plus its extensions; `extensions` is null when the TLV area is malformed. */
export interface WithExtensions<T> {
  readonly base: T;
  readonly extensions: readonly TlvEntry[] | null;
}

function view(data: Uint8Array): DataView {
  return new DataView(data.buffer, data.byteOffset, data.byteLength);
}

function optionTag(data: Uint8Array, offset: number): 0 | 1 | typeof INVALID {
  if (data[offset + 1] !== 0 || data[offset + 2] !== 0 || data[offset + 3] !== 0) return INVALID;
  const tag = data[offset];
  return tag === 0 ? 0 : tag === 1 ? 1 : INVALID;
}

function optionKey(data: Uint8Array, offset: number): Uint8Array | null | typeof INVALID {
  const tag = optionTag(data, offset);
  if (tag === INVALID) return INVALID;
  return tag === 1 ? data.subarray(offset + 4, offset + 36) : null;
}

/** agave's `GenericTokenAccount::valid_account_data` (Token-2022 flavour, a superset of Tokenkeg's). */
export function isValidTokenAccountData(data: Uint8Array): boolean {
  if (data.length < TOKEN_ACCOUNT_LENGTH || data[STATE_OFFSET] === 0) return false;
  if (data.length === TOKEN_ACCOUNT_LENGTH) return true;
  return data.length !== MULTISIG_LENGTH && data[TOKEN_ACCOUNT_LENGTH] === ACCOUNT_TYPE_ACCOUNT;
}

function unpackAccountBase(data: Uint8Array): TokenAccountState | null {
  const dv = view(data);
  const delegate = optionKey(data, 72);
  const state = data[STATE_OFFSET];
  const nativeTag = optionTag(data, 109);
  const closeAuthority = optionKey(data, 129);
  if (delegate === INVALID || nativeTag === INVALID || closeAuthority === INVALID) return null;
  if (state !== 1 && state !== 2) return null; // 0 is uninitialized (Pack::unpack refuses), >2 invalid
  return {
    mint: data.subarray(0, 32),
    owner: data.subarray(32, 64),
    amount: dv.getBigUint64(64, true),
    delegate,
    state,
    isNative: nativeTag === 1 ? dv.getBigUint64(113, true) : null,
    delegatedAmount: dv.getBigUint64(121, true),
    closeAuthority,
  };
}

function unpackMintBase(data: Uint8Array): MintState | null {
  const mintAuthority = optionKey(data, 0);
  const freezeAuthority = optionKey(data, 46);
  if (mintAuthority === INVALID || freezeAuthority === INVALID) return null;
  if (data[45] !== 1) return null; // 0 is uninitialized, anything else is not a bool
  return { mintAuthority, supply: view(data).getBigUint64(36, true), decimals: data[44], freezeAuthority };
}

/** Walks the TLV area after the account-type byte (spl-token-2022 `get_tlv_data_info`). */
function readTlv(tlv: Uint8Array): TlvEntry[] | null {
  const entries: TlvEntry[] = [];
  let at = 0;
  while (at < tlv.length) {
    if (tlv.length < at + 2) return null;
    const type = tlv[at] | (tlv[at + 1] << 8);
    if (type === 0) return entries; // Uninitialized marks the end of used space
    if (tlv.length < at + 4) return null;
    if (type > MAX_EXTENSION_TYPE) return null; // unknown extension types fail the whole walk
    const length = tlv[at + 2] | (tlv[at + 3] << 8);
    const end = at + 4 + length;
    if (end > tlv.length) return null;
    entries.push({ type, value: tlv.subarray(at + 4, end) });
    at = end;
  }
  return entries;
}

/**
 * Highest `ExtensionType` discriminant spl-token-2022 knows: PermissionedBurn in
 * spl-token-2022-interface 3.1, which agave 4.4's account decoder reads (3.0's knew up to PausableAccount, 27).
 */
export const MAX_EXTENSION_TYPE = 28;

/**
 * `StateWithExtensions::unpack`: the base must unpack; longer data must not be multisig-sized,
 * must zero-pad up to byte 165, carry the right account type there, and a TLV area after it.
 */
function unpackWithExtensions<T>(
  data: Uint8Array,
  baseLength: number,
  accountType: number,
  unpackBase: (data: Uint8Array) => T | null,
): WithExtensions<T> | null {
  if (data.length === MULTISIG_LENGTH || data.length < baseLength) return null;
  const base = unpackBase(data.subarray(0, baseLength));
  if (base === null) return null;
  if (data.length === baseLength) return { base, extensions: [] };
  if (data.length < TOKEN_ACCOUNT_LENGTH + 1) return null;
  for (let i = baseLength; i < TOKEN_ACCOUNT_LENGTH; i++) if (data[i] !== 0) return null;
  if (data[TOKEN_ACCOUNT_LENGTH] !== accountType) return null;
  return { base, extensions: readTlv(data.subarray(TOKEN_ACCOUNT_LENGTH + 1)) };
}

/** Unpacks a token account (with extensions), or null when spl-token-2022 would refuse it. */
export function unpackTokenAccount(data: Uint8Array): WithExtensions<TokenAccountState> | null {
  return unpackWithExtensions(data, TOKEN_ACCOUNT_LENGTH, ACCOUNT_TYPE_ACCOUNT, unpackAccountBase);
}

/** Unpacks a mint (with extensions), or null when spl-token-2022 would refuse it. */
export function unpackMint(data: Uint8Array): WithExtensions<MintState> | null {
  return unpackWithExtensions(data, MINT_LENGTH, ACCOUNT_TYPE_MINT, unpackMintBase);
}

/** Unpacks an initialized 355-byte multisig, or null. */
export function unpackMultisig(data: Uint8Array): MultisigState | null {
  if (data.length !== MULTISIG_LENGTH || data[2] !== 1) return null;
  const signers: Uint8Array[] = [];
  for (let i = 0; i < 11; i++) signers.push(data.subarray(3 + 32 * i, 35 + 32 * i));
  return { m: data[0], n: data[1], signers };
}
