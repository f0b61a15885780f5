/**
 * The faucet behind requestAirdrop: a funded System account with a fresh key, and the signed
 * one-instruction transfer it sends, built by hand (a legacy message of three static keys).
 */
import bs58 from "bs58";
import { Account } from "litesvm";
import type { LiteSvm } from "./litesvm-native.ts";
import { createKeyPairFromPrivateKeyBytes, generateKeyPair, getAddressFromPublicKey, signBytes } from "@solana/kit";
import { SYSTEM_PROGRAM } from "../accounts/program-ids.ts";

/** A billion SOL, far beyond any test's needs (solana-test-validator's `--faucet-sol` sets another amount). */
export const FAUCET_LAMPORTS = 1_000_000_000_000_000_000n;

/** A funded faucet account. */
export interface Faucet {
  /** Its address. */
  readonly address: string;
  /** The wire bytes of a signed transfer of `lamports` to `recipient` under `blockhash`. */
  transfer(recipient: string, lamports: bigint, blockhash: string): Promise<Uint8Array>;
}

/** What a faucet may be given: its key (an ed25519 seed, from a ledger directory) and its balance. */
export interface FaucetOptions {
  seed?: Uint8Array;
  lamports?: bigint;
}

/** Creates the faucet's key (a fresh one unless given) and writes its account into `svm`. */
export async function createFaucet(svm: LiteSvm, options: FaucetOptions = {}): Promise<Faucet> {
  const keys = options.seed ? await createKeyPairFromPrivateKeyBytes(options.seed) : await generateKeyPair();
  const address = await getAddressFromPublicKey(keys.publicKey);
  const addressBytes = bs58.decode(address);
  svm.setAccount(
    addressBytes,
    new Account(options.lamports ?? FAUCET_LAMPORTS, new Uint8Array(0), bs58.decode(SYSTEM_PROGRAM), false, 0n),
  );
  return {
    address,
    async transfer(recipient, lamports, blockhash) {
      const message = new Uint8Array(3 + 1 + 32 * 3 + 32 + 1 + 1 + 1 + 2 + 1 + 12);
      let o = 0;
      message.set([1, 0, 1, 3], o);
      o += 4;
      for (const key of [addressBytes, bs58.decode(recipient), bs58.decode(SYSTEM_PROGRAM)]) {
        message.set(key, o);
        o += 32;
      }
      message.set(bs58.decode(blockhash), o);
      o += 32;
      message.set([1, 2, 2, 0, 1, 12, 2, 0, 0, 0], o);
      o += 10;
      new DataView(message.buffer).setBigUint64(o, lamports, true);
      const signature = new Uint8Array(await signBytes(keys.privateKey, message));
      const wire = new Uint8Array(1 + 64 + message.length);
      wire[0] = 1;
      wire.set(signature, 1);
      wire.set(message, 65);
      return wire;
    },
  };
}
