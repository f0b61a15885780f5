/**
 * A unary call's deadline is kept by the server (src/server/interceptors.ts, createDeadlineInterceptor): the
 * answer is DEADLINE_EXCEEDED when the deadline passes, even when the handler does not listen to its signal.
 * The deadline travels as the header alone (no client timer), so what is checked is the server's answer; on the
 * lean unary path and, with it off, on connect's router.
 */
import { afterEach, describe, expect, it } from "vitest";
import { API_KEY, SLOW_PROGRAM, startTestServer, type TestServer } from "./helpers.ts";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.listening.close({ timeoutMs: 500 });
  server = undefined;
});

describe.each([
  ["the lean unary path", true],
  ["the router", false],
])("a unary call past its deadline, on %s", (_name, unaryPath) => {
  it("is answered deadline_exceeded, not when the handler (which ignores its signal) is done", async () => {
    server = await startTestServer({ unaryPath });
    // The handler sleeps 30 s without looking at its signal; the deadline is 200 ms.
    const res = await fetch(`${server.url}/solgate.v1.ProgramService/ListProgramAccounts`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${API_KEY}`,
        "content-type": "application/json",
        "connect-protocol-version": "1",
        "connect-timeout-ms": "200",
      },
      body: JSON.stringify({ programId: SLOW_PROGRAM, cursor: "30000" }),
      signal: AbortSignal.timeout(20_000),
    });
    const body = (await res.json()) as { code?: string };
    expect(body.code, JSON.stringify(body)).toBe("deadline_exceeded");
    expect(res.status).toBe(504);
  }, 30_000);
});
