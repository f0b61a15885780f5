/**
 * Token amounts for humans, as agave's `token_amount_to_ui_amount_v3` renders them: plain
 * amount / 10^decimals, or through a Token-2022 mint's interest-bearing or scaled-UI-amount
 * configuration (spl-token-2022: `format!("{:.*}", decimals, scaled)`, trailing zeroes trimmed).
 */

/** Interest-bearing configuration of a mint (spl-token-2022 `InterestBearingConfig`). */
export interface InterestBearing {
  readonly initializationTimestamp: bigint;
  readonly preUpdateAverageRate: number;
  readonly lastUpdateTimestamp: bigint;
  readonly currentRate: number;
}

/** Scaled-UI-amount configuration of a mint (spl-token-2022 `ScaledUiAmountConfig`). */
export interface ScaledUiAmount {
  readonly multiplier: number;
  readonly newMultiplierEffectiveTimestamp: bigint;
  readonly newMultiplier: number;
}

/** What rendering an amount needs from its mint. */
export interface MintInfo {
  readonly decimals: number;
  readonly interestBearing?: InterestBearing;
  readonly scaledUiAmount?: ScaledUiAmount;
  /** The clock's unix timestamp (only read when a configuration above is present). */
  readonly unixTimestamp?: bigint;
}

/** agave's `UiTokenAmount`. */
export interface UiTokenAmount {
  readonly uiAmount: number | null;
  readonly decimals: number;
  readonly amount: string;
  readonly uiAmountString: string;
}

const SECONDS_PER_YEAR = 60 * 60 * 24 * 365.24;
const ONE_IN_BASIS_POINTS = 10_000;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const POWERS_OF_TEN: readonly number[] = Array.from({ length: 20 }, (_, i) => Number(10n ** BigInt(i)));

/** agave's `real_number_string_trimmed`: "1.5" for 1500 at 3 decimals, "0.000000001", "10". */
export function realNumberStringTrimmed(amount: bigint, decimals: number): string {
  const digits = amount.toString();
  if (decimals === 0) return digits;
  const padded = digits.padStart(decimals + 1, "0");
  return trimUiAmount(
    `${padded.slice(0, padded.length - decimals)}.${padded.slice(padded.length - decimals)}`,
    decimals,
  );
}

function trimUiAmount(text: string, decimals: number): string {
  return decimals > 0 ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
}

/**
 * Rust's `format!("{:.*}", decimals, value)` for a finite non-negative double: the exact binary
 * value rounded half-to-even at `decimals` places (JavaScript's toFixed rounds ties up and switches
 * to exponent notation from 1e21).
 */
export function formatFixed(value: number, decimals: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  const bits = new DataView(new ArrayBuffer(8));
  bits.setFloat64(0, Math.abs(value));
  const high = bits.getUint32(0);
  const exponentBits = (high >>> 20) & 0x7ff;
  let mantissa = (BigInt(high & 0xfffff) << 32n) | BigInt(bits.getUint32(4));
  if (exponentBits !== 0) mantissa |= 1n << 52n;
  const exponent = (exponentBits === 0 ? 1 : exponentBits) - 1075; // value = mantissa * 2^exponent
  const scale = 10n ** BigInt(decimals);
  let units: bigint;
  if (exponent >= 0) {
    units = (mantissa << BigInt(exponent)) * scale;
  } else {
    const numerator = mantissa * scale;
    const denominator = 1n << BigInt(-exponent);
    units = numerator / denominator;
    const twice = 2n * (numerator % denominator);
    if (twice > denominator || (twice === denominator && units % 2n === 1n)) units += 1n;
  }
  const digits = units.toString().padStart(decimals + 1, "0");
  const sign = value < 0 ? "-" : "";
  return decimals === 0 ? sign + digits : `${sign}${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}

/** `exp(rate * timespan / year / 10_000)` with spl-token-2022's checked i64/i128 arithmetic. */
function rateExp(rate: number, from: bigint, to: bigint): number | null {
  const timespan = to - from;
  if (timespan < I64_MIN || timespan > I64_MAX) return null;
  const numerator = Number(BigInt(rate) * timespan);
  return Math.exp(numerator / SECONDS_PER_YEAR / ONE_IN_BASIS_POINTS);
}

/** The factor spl-token-2022 multiplies raw amounts by, or null when its checked math overflows. */
function totalScale(mint: MintInfo): number | null {
  const now = mint.unixTimestamp ?? 0n;
  const interest = mint.interestBearing;
  if (interest !== undefined) {
    const before = rateExp(
      interest.preUpdateAverageRate,
      interest.initializationTimestamp,
      interest.lastUpdateTimestamp,
    );
    const after = rateExp(interest.currentRate, interest.lastUpdateTimestamp, now);
    return before === null || after === null ? null : (before * after) / 10 ** mint.decimals;
  }
  const scaled = mint.scaledUiAmount!;
  const multiplier = now >= scaled.newMultiplierEffectiveTimestamp ? scaled.newMultiplier : scaled.multiplier;
  return multiplier / 10 ** mint.decimals;
}

/** Renders a raw amount of a mint as agave does. */
export function uiTokenAmount(amount: bigint, mint: MintInfo): UiTokenAmount {
  const { decimals } = mint;
  if (mint.interestBearing === undefined && mint.scaledUiAmount === undefined) {
    const divisor = POWERS_OF_TEN[decimals]; // 10^decimals must fit a u64, else no uiAmount
    return {
      uiAmount: divisor === undefined ? null : Number(amount) / divisor,
      decimals,
      amount: amount.toString(),
      uiAmountString: realNumberStringTrimmed(amount, decimals),
    };
  }
  const scale = totalScale(mint);
  const text = scale === null ? null : trimUiAmount(formatFixed(Number(amount) * scale, decimals), decimals);
  const parsed = text === null ? null : Number(text);
  return {
    // f64::from_str accepts "inf"/"NaN"; serde_json writes non-finite floats as null.
    uiAmount: parsed === null || !Number.isFinite(parsed) ? null : parsed,
    decimals,
    amount: amount.toString(),
    uiAmountString: text ?? "",
  };
}
