/**
 * A webhook receiver for a collection's change feed: it registers a webhook (CreateWebhook; the signing secret is
 * shown once, in that answer), then verifies every delivery with the Standard Webhooks library (`standardwebhooks`
 * on npm) before trusting it. A delivery that does not verify gets 401 (Solgate retries it, so a real one is not
 * lost); a verified one gets 204. Deliveries come at least once: `webhook-id` is the same on every attempt of one
 * delivery, so a repeat is acknowledged and not handled twice. `npm run receive`.
 *
 *   SOLGATE_URL           the gateway, e.g. http://127.0.0.1:8080
 *   SOLGATE_API_KEY       an API key
 *   SOLGATE_COLLECTION    the collection to follow (default: the localnet's seeded collection)
 *   SOLGATE_WEBHOOK_PORT  the port to listen on (default: 0, any free one)
 *   SOLGATE_WEBHOOK_URL   where Solgate reaches this receiver (default: http://127.0.0.1:<port>/hook, which a
 *                         gateway accepts only with SOLGATE_WEBHOOK_ALLOW_PRIVATE_URLS=1; use https in production)
 *   SOLGATE_EVENTS        how many deliveries to handle before stopping (default: 3)
 */
import { createServer } from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { createSolgateClient, errorReason } from "@solgate/client";
import { Webhook, WebhookVerificationError } from "standardwebhooks";

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`set ${name}`);
  return value;
};

const solgate = createSolgateClient({ baseUrl: env("SOLGATE_URL"), apiKey: env("SOLGATE_API_KEY"), protocol: "grpc" });
const collection = env("SOLGATE_COLLECTION", "8HV7NUeYyk2B4P5VY8qjptse9VaZ3J8qRq6W3NVB5NSJ");
const wanted = Number(env("SOLGATE_EVENTS", "3"));

/** The three headers a Standard Webhooks signature covers, as the library takes them. */
function signatureHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const pick = (name: string) => (typeof headers[name] === "string" ? headers[name] : "");
  return {
    "webhook-id": pick("webhook-id"),
    "webhook-timestamp": pick("webhook-timestamp"),
    "webhook-signature": pick("webhook-signature"),
  };
}

async function main(): Promise<void> {
  let verifier: Webhook | undefined;
  const seen = new Set<string>();
  let lastVerified: { body: string; headers: Record<string, string> } | undefined;
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    // Verify the raw bytes as they came: parsing and re-serializing first would change what was signed.
    const body = Buffer.concat(chunks).toString("utf8");
    const headers = signatureHeaders(req.headers);
    let event: { kind: string; sequence: string; verifiedSize: string; floorPrice?: { sol: number } };
    try {
      if (verifier === undefined) throw new WebhookVerificationError("no webhook registered yet");
      event = verifier.verify(body, headers) as typeof event;
    } catch (error) {
      console.log(`refused a delivery: ${error instanceof Error ? error.message : String(error)}`);
      res.writeHead(401).end();
      return;
    }
    res.writeHead(204).end();
    const id = headers["webhook-id"];
    if (seen.has(id)) return; // a retry of a delivery already handled
    seen.add(id);
    lastVerified = { body, headers };
    console.log(
      `delivery ${id}: event ${event.sequence} ${event.kind}, verified size ${event.verifiedSize}` +
        (event.floorPrice === undefined ? "" : `, floor ${event.floorPrice.sol} SOL`),
    );
    if (seen.size === wanted) done();
  });
  await new Promise<void>((resolve) => server.listen(Number(env("SOLGATE_WEBHOOK_PORT", "0")), "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = env("SOLGATE_WEBHOOK_URL", `http://127.0.0.1:${port}/hook`);

  const created = await solgate.webhook.createWebhook({ url, collections: [collection] });
  const webhookId = created.webhook?.id ?? "";
  // The secret (`whsec_...`) is shown only here: a real receiver keeps it in its secret store.
  verifier = new Webhook(created.secret);
  console.log(`webhook ${webhookId} registered for ${collection}, delivering to ${url}`);
  try {
    await finished;
    console.log(`webhook: verified ${seen.size} deliveries`);

    // What the verification is for: the same delivery with its sequence changed in the body must not pass.
    const tampered = lastVerified!.body.replace(
      /"sequence":"(\d+)"/u,
      (_m, n: string) => `"sequence":"${BigInt(n) + 1n}"`,
    );
    if (tampered === lastVerified!.body) throw new Error("nothing to tamper with in the body");
    try {
      verifier.verify(tampered, lastVerified!.headers);
      throw new Error("a tampered body passed verification");
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      console.log(`webhook: a tampered body is rejected: ${error.message}`);
    }

    const { deliveries } = await solgate.webhook.listWebhookDeliveries({ id: webhookId });
    console.log(`webhook: the gateway lists ${deliveries.length} deliveries of ${webhookId}`);
  } finally {
    await solgate.webhook.deleteWebhook({ id: webhookId });
    server.closeAllConnections();
    server.close();
  }
}

main().catch((error: unknown) => {
  console.log(`failed: ${errorReason(error) ?? ""} ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
