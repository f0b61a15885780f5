import { create } from "@bufbuild/protobuf";
import { createServer } from "../../src/server/server.ts";
import { createApiKeyChecker } from "../../src/server/auth.ts";
import { createLogger } from "../../src/server/logger.ts";
import { TransactionService, WatchStatusResponseSchema } from "../../gen/solgate/v1/transaction_service_pb.js";
const server = createServer({
  routes: (router) => router.service(TransactionService, {
    async *watchStatus(_req, ctx) {
      yield create(WatchStatusResponseSchema, { event: { case: "heartbeat", value: { slot: 1n } } });
      await new Promise((r) => ctx.signal.addEventListener("abort", r));
    },
  }),
  auth: createApiKeyChecker(["k".repeat(20)]),
  logger: createLogger({ level: "info" }),
});
const l = await server.listen(0, "127.0.0.1");
console.log(JSON.stringify({ msg: "solgate listening", port: l.port }));
setInterval(() => { const m = process.memoryUsage(); console.error(`heap ${(m.heapUsed/1048576).toFixed(0)} rss ${(m.rss/1048576).toFixed(0)}`); }, 3000).unref();
process.on("SIGTERM", () => process.exit(0));
