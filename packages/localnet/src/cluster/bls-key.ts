/**
 * The BLS public key solana-test-validator 4.4 puts in its vote account at genesis
 * (`derive_bls_pubkey_from_authorized_voter_keypair`, the authorized voter being the vote account):
 * `BLSKeypair::derive_from_signer(keypair, b"alpenglow")` of solana-bls-signatures, i.e.
 *
 * 1. the vote keypair's ed25519 signature over `"bls-key-derive-alpenglow"` (deterministic) is the
 *    input key material;
 * 2. blst's `blst_keygen` (IETF BLS KeyGen, draft 4 on): salt = SHA-256("BLS-SIG-KEYGEN-SALT-"),
 *    OKM = HKDF-SHA-256(IKM || 0x00, salt, info = I2OSP(48, 2), 48 bytes), SK = OS2IP(OKM) mod r,
 *    re-hashing the salt while SK is 0;
 * 3. the public key SK x G1, compressed (48 bytes, the ZCash encoding blst and blstrs use).
 *
 * HKDF and SHA-256 are node:crypto's; the curve arithmetic is @noble/curves'.
 */
import { createHash, hkdfSync, sign, type KeyObject } from "node:crypto";
import { bls12_381 } from "@noble/curves/bls12-381.js";

/** agave-votor-messages' BLS_KEYPAIR_DERIVE_SEED. */
const DERIVE_SEED = "alpenglow";
const KEYGEN_SALT = "BLS-SIG-KEYGEN-SALT-";
const OKM_LENGTH = 48;

/** The compressed BLS public key derived from an ed25519 signer, as solana-bls-signatures does. */
export function deriveBlsPubkey(ed25519Key: KeyObject): Uint8Array {
  const ikm = sign(null, Buffer.from(`bls-key-derive-${DERIVE_SEED}`), ed25519Key);
  const order = bls12_381.fields.Fr.ORDER;
  const info = Buffer.from([0, OKM_LENGTH]);
  let salt = createHash("sha256").update(KEYGEN_SALT).digest();
  for (;;) {
    const okm = Buffer.from(hkdfSync("sha256", Buffer.concat([ikm, Buffer.from([0])]), salt, info, OKM_LENGTH));
    const sk = BigInt(`0x${okm.toString("hex")}`) % order;
    if (sk !== 0n) return bls12_381.G1.ProjectivePoint.BASE.multiply(sk).toRawBytes(true);
    salt = createHash("sha256").update(salt).digest();
  }
}
