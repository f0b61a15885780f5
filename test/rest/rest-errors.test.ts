import { describe, expect, it } from "vitest";
import { SolgateError } from "../../src/errors.ts";
import { restErrorOf } from "../../src/rest/rest-errors.ts";

describe("restErrorOf", () => {
  it("gives back the details exactly as the core put them, whatever they look like", () => {
    const details = {
      logs: ["Program 11111111111111111111111111111111 invoke [1]", "Program failed"],
      unitsConsumed: 150n,
      error: { InstructionError: [0, { Custom: 1 }] },
      field: "signature",
      digits: "123",
      flag: "true",
      huge: 18446744073709551615n,
    };
    const rest = restErrorOf(new SolgateError("SIMULATION_FAILED", "transaction failed in simulation", details));
    expect(rest.status).toBe(422);
    expect(rest.body).toEqual({
      code: "simulation_failed",
      message: "transaction failed in simulation",
      details: { ...details, unitsConsumed: 150, huge: "18446744073709551615" },
    });
  });
});
