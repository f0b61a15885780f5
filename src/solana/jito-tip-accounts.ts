/**
 * Jito's eight mainnet tip accounts (what `getTipAccounts` answers on mainnet; the localnet's block engine
 * serves the same ones). Used to recognise tips in blocks when no block engine is configured to ask.
 */
import { getBase58Encoder } from "@solana/kit";

/** The tip accounts, base58. */
export const JITO_TIP_ACCOUNTS: readonly string[] = [
  "96gYZGLnJYVFmbjzopPSU6QiEV5fGqZNyN9nmNhvrZU5",
  "HFqU5x63VTqvQss8hp11i4wVV8bD44PvwucfZ2bU7gRe",
  "Cw8CFyM9FkoMi7K7Crf6HNQqf4uEMzpKw6QNghXLvLkY",
  "ADaUMid9yfUytqMBgopwjb2DTLSokTSzL1zt6iGPaS49",
  "DfXygSm4jCyNCybVYYK6DwvWqjKee8pbDmJGcLWNDXjh",
  "ADuUkR4vqLUMWXxW9gh6D6L8pMSawimctcNZ5pGwDcEt",
  "DttWaMuVvTiduZRnguLF7jNxTgiMBZ1hyAumKUiL2KRL",
  "3AVi9Tg9Uo68tJfuvoKvqKNWKkC5wPdSSdeBnizKZ6jT",
];

/** The tip accounts as 32-byte keys, for byte comparisons in block scans. */
export const JITO_TIP_ACCOUNT_KEYS: readonly Uint8Array[] = JITO_TIP_ACCOUNTS.map((address) =>
  Uint8Array.from(getBase58Encoder().encode(address)),
);
